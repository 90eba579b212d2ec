// Runs dist/mcp-computer.lua under cc-emu.lua (stock Lua 5.2) as an emulated
// ComputerCraft computer, and plays CC's Java side for it: timers run here
// with setTimeout, and the websockets it opens are REAL `ws` connections.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { StringDecoder } from 'node:string_decoder';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { LUA, INSTALL_HINT } from './lua-env.js';
import { startFakeBridge } from './fake-bridge.js';
import { waitFor } from './waiters.js';

const here = path.dirname(fileURLToPath(import.meta.url));
export const REPO = path.resolve(here, '../..');
export const PROGRAM = path.join(REPO, 'dist', 'mcp-computer.lua'); // what the bridge serves (npm run build)
export const EMULATOR = path.join(here, 'cc-emu.lua');
export const COLOURS = { white: 1, orange: 2, yellow: 16, red: 16384 };
/** The address mcp-computer dials for `url` (its own query), which names its link's events in CC. */
export const linkAddress = (url) => `${url}${url.includes('?') ? '&' : '?'}mcp-computer-link`;

/** Hex of a string's UTF-8 bytes, or of a Buffer's raw bytes. */
const hex = (value) => (Buffer.isBuffer(value) ? value : Buffer.from(String(value), 'utf8')).toString('hex');

/** Encodes one event argument for the emulator's line protocol. */
function token(value) {
  if (value === null || value === undefined) return 'nil';
  if (typeof value === 'string') return `s:${hex(value)}`;
  if (Buffer.isBuffer(value)) return `s:${value.toString('hex')}`;
  if (typeof value === 'number') return `n:${value}`;
  if (typeof value === 'boolean') return `b:${value ? 1 : 0}`;
  if (typeof value === 'object' && 'handle' in value) return `h:${value.handle}`;
  throw new TypeError(`cannot pass ${typeof value} to Lua`);
}

/** A Lua literal for a settings file (the format textutils.serialize writes). */
function luaLiteral(value) {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new TypeError(`unsupported setting value ${value}`);
}

class Computer {
  constructor(opts) {
    this.opts = opts;
    this.timeScale = opts.timeScale ?? 0.01;
    this.maxMessage = opts.maxMessage ?? 131072;
    this.text = '';
    this.lineList = [{ text: '', colours: new Set() }];
    this.fg = COLOURS.white;
    this.decoder = new StringDecoder('utf8');
    this.stderr = '';
    this.timers = new Map();
    this.sockets = new Map();
    this.held = [];
    this.waiters = new Set();
    this.exitInfo = null;
    this.sent = [];
    this.transmitted = [];
    this.dropped = []; // names of the events the emulator's full queue dropped (CC's 256-event limit)
    this.droppedTimers = []; // ids of the timers among them
    this.timersStarted = []; // [id, seconds] of every os.startTimer
    this.heldLines = null; // lines kept back by holdEvents()
    this.onSend = null; // (text) => void, called for each frame the program sends, before it runs on
  }

  /** Everything written to the screen so far, newlines where the cursor moved to a new line. */
  get output() {
    return this.text;
  }

  /** Screen lines; `colours` says which text colours were used on each. */
  get lines() {
    return this.lineList.map((l) => ({ text: l.text, colours: [...l.colours] }));
  }

  /** The lines that contain text written in the given colour (e.g. printError's red). */
  linesIn(colour) {
    return this.lineList.filter((l) => l.colours.has(colour)).map((l) => l.text);
  }

  start() {
    const o = this.opts;
    this.root = mkdtempSync(path.join(tmpdir(), 'cc-emu-'));
    const programPath = o.programPath ?? 'mcp-computer.lua';
    mkdirSync(path.dirname(path.join(this.root, programPath)), { recursive: true });
    copyFileSync(o.program ?? PROGRAM, path.join(this.root, programPath));
    for (const [file, content] of Object.entries(o.files ?? {})) {
      mkdirSync(path.dirname(path.join(this.root, file)), { recursive: true });
      writeFileSync(path.join(this.root, file), content);
    }
    if (o.settings) {
      const body = Object.entries(o.settings)
        .map(([k, v]) => `  [ ${JSON.stringify(k)} ] = ${luaLiteral(v)},\n`)
        .join('');
      writeFileSync(path.join(this.root, '.settings'), `{\n${body}}`);
    }

    const flags = ['--root', this.root, '--id', String(o.id ?? 1)];
    if (o.label !== undefined && o.label !== null) flags.push('--label-hex', hex(o.label));
    // Wide by default so status lines do not wrap in assertions; pass
    // size: [51, 19] for a real computer's screen.
    const [w, h] = o.size ?? [200, 40];
    flags.push('--size', `${w}x${h}`);
    if (o.colour === false) flags.push('--mono');
    if (o.httpDisabled) flags.push('--no-http');
    if (o.websocket === 'disabled') flags.push('--ws-disabled');
    if (o.websocket === 'missing') flags.push('--ws-missing');
    if (o.noAsync) flags.push('--no-async');
    if (o.nativeAsync) flags.push('--native-async');
    if (o.multishell) flags.push('--multishell');
    if (o.maxWebsockets !== undefined) flags.push('--max-websockets', String(o.maxWebsockets));
    if (o.websocketsInUse) flags.push('--websockets-in-use', String(o.websocketsInUse));
    if (o.failure) flags.push('--ws-fail-hex', hex(o.failure));
    if (o.syncFailure) flags.push('--ws-sync-fail-hex', hex(o.syncFailure));
    if (o.oldJson) flags.push('--old-json');
    if (o.maxMessage) flags.push('--max-message', String(o.maxMessage));
    if (o.watchdog !== undefined) flags.push('--watchdog', String(o.watchdog));
    if (o.tickRate !== undefined) flags.push('--tick-rate', String(o.tickRate));
    if (o.hardAbort !== undefined) flags.push('--hard-abort', String(o.hardAbort));
    if (o.settingsSaveFails) flags.push('--settings-save-fails');
    if (o.syncHost) flags.push('--sync-host');
    for (const [name, kind] of Object.entries(o.peripherals ?? {})) flags.push('--peripheral', `${name}=${kind}`);
    const command = o.command ?? 'mcp-computer';
    const args = [...(o.args ?? [])];
    if (o.url) args.unshift(o.url);

    if (!LUA) throw new Error(`lua5.2 not found on PATH; ${INSTALL_HINT}`);
    this.proc = spawn(LUA, [EMULATOR, ...flags, '--', command, ...args], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.proc.stdin.on('error', () => {}); // the emulator may exit first
    this.proc.stderr.setEncoding('utf8');
    this.proc.stderr.on('data', (d) => {
      this.stderr += d;
    });
    createInterface({ input: this.proc.stdout }).on('line', (line) => this.onLine(line));
    this.exited = new Promise((resolve) => {
      this.proc.on('exit', (code, signal) => {
        this.cleanupHost();
        this.exitInfo = { code, signal, output: this.text, stderr: this.stderr };
        for (const w of this.waiters) w.check();
        resolve(this.exitInfo);
      });
    });
    return this;
  }

  send(line) {
    if (this.exitInfo || !this.proc.stdin.writable) return;
    this.proc.stdin.write(`${line}\n`);
  }

  /** Queues a CC event, like os.queueEvent from outside. */
  queueEvent(name, ...args) {
    const line = ['ev', token(name), ...args.map(token)].join(' ');
    if (this.heldLines && name === 'websocket_message') this.heldLines.push(line);
    else this.send(line);
  }

  /** From now on websocket messages are kept back until releaseEvents() (timers and the rest go on). */
  holdEvents() {
    this.heldLines ??= [];
  }

  /** How many messages holdEvents() kept back so far. */
  get heldEvents() {
    return this.heldLines?.length ?? 0;
  }

  /** Queues every kept-back message at once, as CC does for what arrives while the computer runs. */
  releaseEvents() {
    const lines = this.heldLines ?? [];
    this.heldLines = null;
    this.send([`batch ${lines.length}`, ...lines].join('\n'));
  }

  /** os.clock() jumps `seconds` ahead (read by the emulator when it next waits for the host). */
  advanceClock(seconds) {
    this.send(`clock ${seconds}`);
  }

  /** Attaches a peripheral of a harness kind (monitor, chest, barrel, modem) and queues CC's "peripheral" event. */
  attachPeripheral(name, kind) {
    this.send(`attach ${name}=${kind}`);
  }

  /** Detaches a peripheral and queues "peripheral_detach". */
  detachPeripheral(name) {
    this.send(`detach ${name}`);
  }

  /** KiB of Lua heap in use after a full collection, asked once the emulator is idle (nothing queued). */
  heapKiB() {
    return new Promise((resolve) => {
      this.heapWaiters = [...(this.heapWaiters ?? []), resolve];
      this.send('heap');
    });
  }

  /** Ctrl+T. */
  terminate() {
    this.queueEvent('terminate');
  }

  onLine(line) {
    const [cmd, ...rest] = line.split(' ');
    switch (cmd) {
      case 'w':
        this.append(this.decoder.write(Buffer.from(rest[0] ?? '', 'hex')), this.fg);
        break;
      case 'nl':
        this.append('\n');
        break;
      case 'fg':
        this.fg = Number(rest[0]);
        break;
      case 'bg':
        break;
      case 'timer': {
        const id = Number(rest[0]);
        const seconds = Number(rest[1]);
        this.timersStarted.push([id, seconds]);
        const ms = Math.max(0, this.opts.timerMs ? this.opts.timerMs(seconds) : seconds * 1000 * this.timeScale);
        this.timers.set(id, setTimeout(() => {
          this.timers.delete(id);
          this.queueEvent('timer', id);
        }, ms));
        break;
      }
      case 'cancel-timer':
        clearTimeout(this.timers.get(Number(rest[0])));
        this.timers.delete(Number(rest[0]));
        break;
      case 'ws-open': {
        const id = Number(rest[0]);
        const url = Buffer.from(rest[1], 'hex').toString('utf8');
        if (this.opts.holdConnect) this.held.push({ id, url });
        else this.openSocket(id, url);
        break;
      }
      case 'ws-send': {
        const s = this.sockets.get(Number(rest[0]));
        const data = Buffer.from(rest[1] ?? '', 'hex');
        const binary = rest[2] === '1';
        this.sent.push(data.toString('utf8'));
        this.onSend?.(data.toString('utf8'));
        // Like CC (1.109+): text frames are the Lua string's bytes read as
        // UTF-8, invalid sequences replaced.
        if (s?.ws.readyState === WebSocket.OPEN) s.ws.send(binary ? data : data.toString('utf8'), { binary });
        break;
      }
      case 'ws-close': {
        const s = this.sockets.get(Number(rest[0]));
        if (s) {
          s.closedByLua = true;
          // CC sends no close frame: Websocket.dispose() closes the netty
          // channel (Resource.closeChannel), so the peer sees 1006.
          s.ws.terminate();
        }
        break;
      }
      case 'modem':
        // a modem peripheral's transmit (lua-tools): channel, reply channel, message
        this.transmitted.push({ channel: Number(rest[0]), replyChannel: Number(rest[1]), message: Buffer.from(rest[2] ?? '', 'hex').toString('utf8') });
        break;
      case 'heap':
        this.heapWaiters?.shift()?.(Number(rest[0]));
        break;
      case 'dropped':
        this.dropped.push(Buffer.from(rest[0] ?? '', 'hex').toString('utf8'));
        if (this.dropped.at(-1) === 'timer') this.droppedTimers.push(Number(rest[1]));
        break;
      case 'sync':
        // --sync-host: every line sent before this one is ahead of "go" in the pipe
        this.send('go');
        break;
      case 'exit':
        break;
      default:
        this.stderr += `unknown emulator line: ${line}\n`;
    }
  }

  append(text, fg) {
    if (text === '') return;
    this.text += text;
    const parts = text.split('\n');
    parts.forEach((part, i) => {
      if (i > 0) this.lineList.push({ text: '', colours: new Set() });
      const line = this.lineList[this.lineList.length - 1];
      line.text += part;
      if (fg !== undefined && part.trim() !== '') line.colours.add(fg);
    });
    for (const w of this.waiters) w.check();
  }

  openSocket(id, url) {
    const ws = new WebSocket(url, { maxPayload: 0 });
    const s = { ws, url, opened: false, closedByLua: false, done: false };
    this.sockets.set(id, s);
    const fail = (message) => {
      if (s.done || s.closedByLua) return;
      s.done = true;
      this.send(`closed ${id}`); // gives its slot back (http.max_websockets)
      this.queueEvent('websocket_failure', url, message);
    };
    ws.on('open', () => {
      s.opened = true;
      this.queueEvent('websocket_success', url, { handle: id });
    });
    ws.on('unexpected-response', (_req, res) => {
      fail(`Invalid handshake response getStatus: ${res.statusCode} ${res.statusMessage}`);
      ws.terminate();
    });
    ws.on('error', () => {
      if (!s.opened) fail('Could not connect');
    });
    ws.on('message', (data, isBinary) => {
      if (s.closedByLua || s.done) return;
      if (this.maxMessage > 0 && data.length > this.maxMessage) {
        // A frame over max_websocket_message: netty's WebSocket08FrameDecoder
        // (maxFramePayloadLength) answers it with close 1009 and throws a
        // CorruptedWebSocketFrameException; CC's WebsocketHandler.exceptionCaught
        // closes the channel and, the handshake being done, queues
        // websocket_closed with NetworkUtils.toFriendlyError's "Could not
        // connect" (that exception is no TooLongFrameException) and no code.
        s.done = true;
        ws.close(1009, `Max frame length of ${this.maxMessage} has been exceeded.`);
        this.send(`closed ${id}`);
        this.queueEvent('websocket_closed', url, 'Could not connect');
        return;
      }
      this.queueEvent('websocket_message', url, Buffer.from(data), isBinary);
    });
    ws.on('close', (code, reason) => {
      if (!s.opened || s.closedByLua || s.done) return;
      s.done = true;
      this.send(`closed ${id}`);
      if (code === 1006) this.queueEvent('websocket_closed', url, 'Connection closed');
      else this.queueEvent('websocket_closed', url, reason.length ? reason.toString('utf8') : null, code === 1005 ? null : code);
    });
  }

  /** Lets connects held back by `holdConnect` go ahead. */
  releaseConnects() {
    this.opts.holdConnect = false;
    for (const { id, url } of this.held.splice(0)) this.openSocket(id, url);
  }

  /** The websockets the program opened (real ws clients), by emulator handle id. */
  get websockets() {
    return [...this.sockets.values()].map((s) => s.ws);
  }

  /**
   * Resolves when the screen output (from offset `since`) matches `pattern`
   * (a string or RegExp); rejects on timeout or when the program exits first.
   * Resolves to { match, end } where `end` is an offset for the next wait.
   */
  waitForOutput(pattern, timeoutMs = 10000, since = 0) {
    const dump = () => `--- output ---\n${this.text}\n--- stderr ---\n${this.stderr}`;
    return waitFor(
      this.waiters,
      () => {
        const text = this.text.slice(since);
        let index = -1;
        let match = null;
        if (typeof pattern === 'string') {
          index = text.indexOf(pattern);
          match = index >= 0 ? [pattern] : null;
        } else {
          match = pattern.exec(text);
          index = match ? match.index : -1;
        }
        if (match) return { match, end: since + index + match[0].length };
        if (this.exitInfo) {
          throw new Error(`program exited (code ${this.exitInfo.code}) before output matched ${pattern}\n${dump()}`);
        }
        return undefined;
      },
      timeoutMs,
      () => `timed out waiting for ${pattern}\n${dump()}`,
    );
  }

  /** Waits for exit, failing (and killing the process) after timeoutMs. */
  async waitForExit(timeoutMs = 10000) {
    let timer;
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => {
        this.kill();
        reject(new Error(`program did not exit within ${timeoutMs} ms\n--- output ---\n${this.text}\n--- stderr ---\n${this.stderr}`));
      }, timeoutMs);
    });
    try {
      return await Promise.race([this.exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  cleanupHost() {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    for (const s of this.sockets.values()) s.ws.terminate();
  }

  kill() {
    if (!this.exitInfo) this.proc.kill('SIGKILL');
  }

  /** Kills the process if still running, closes its sockets and removes its file system. */
  async dispose() {
    this.kill();
    await this.exited;
    rmSync(this.root, { recursive: true, force: true });
  }
}

/**
 * Starts an emulated computer running dist/mcp-computer.lua.
 *
 * Options: id, label (string, or a Buffer of raw bytes), url (first argument), args, command (what is typed,
 * default "mcp-computer"), settings (object written to /.settings), files
 * ({ path: content } in the computer's file system), httpDisabled,
 * websocket ('disabled' | 'missing'), noAsync, failure (async connect
 * failure message, e.g. "Domain not permitted"), syncFailure, oldJson,
 * maxMessage, watchdog and hardAbort (seconds, CC: 7 and 1.5), tickRate (os.clock's speed: 0.25 is a server at 5 TPS), size [w, h] (default 200x40),
 * colour (false for a basic computer), timeScale (emulated seconds -> real, default 0.01),
 * holdConnect (keep connects pending until releaseConnects()), peripherals ({ name: "monitor" | "chest" | "barrel" | "modem" }),
 * settingsSaveFails (settings.save returns false and writes nothing, as CC does when it cannot open the file),
 * syncHost (events the host sends while the program runs are queued before its next event, as in CC: see
 * onSend, holdEvents). Events CC's 256-event queue drops are listed in `dropped`.
 */
export function startComputer(opts = {}) {
  return new Computer(opts).start();
}

/** startComputer, disposed when the test ends. */
export function useComputer(t, opts) {
  const c = startComputer(opts);
  t.after(() => c.dispose());
  return c;
}

/**
 * A computer linked to a fresh fake bridge, and its link; both end with the test. `opts.hello` goes
 * to the fake bridge (see startFakeBridge), the rest to the computer.
 *
 * The link is the bridge's newest connection once the computer says it is linked, not the first:
 * at the default timeScale the program's 5 s hello wait is 50 ms, which a loaded machine can pass
 * before hello-ok arrives; the program then drops that connection and links on another.
 */
export async function linkedOnFakeBridge(t, { hello, ...opts } = {}) {
  const bridge = await startFakeBridge(hello === undefined ? {} : { hello });
  t.after(() => bridge.close());
  const c = useComputer(t, { url: bridge.url, ...opts });
  await c.waitForOutput(/waiting\s+for\s+requests/);
  await bridge.link(0);
  const link = bridge.links.at(-1);
  return { bridge, c, link };
}

/** The result of an answer that must be ok. */
export function okResult(res) {
  assert.equal(res.ok, true, JSON.stringify(res));
  return res.result;
}
