// stdio, client side: spawn the server, newline-delimited JSON on its stdin/stdout, its stderr into
// our log line by line with its name in front. Ending it: close stdin, SIGTERM after a grace,
// SIGKILL after another; every child still alive when the bridge process exits is killed.
import { spawn, type ChildProcess } from 'node:child_process';
import type { Logger } from '../log.js';
import type { Transport, TransportHandlers } from '../jsonrpc/client.js';
import { LineReader, encodeLine, requestLine } from '../jsonrpc/ndjson.js';

export interface StdioTransportOptions {
  command: string;
  args: string[];
  /** Added to the few variables every child inherits (INHERITED_ENV). */
  env: Record<string, string>;
  cwd?: string;
  /** Longest stdout line accepted; a longer one is dropped with a log line. */
  maxLineBytes: number;
  log: Logger;
  /** Log prefix: `upstream files`. */
  name: string;
  /** After stdin is closed: SIGTERM when the child is still running this long after (default 2000). */
  termAfterMs?: number;
  /** SIGKILL when it is still running this long after stdin was closed (default 5000). */
  killAfterMs?: number;
}

/**
 * The only variables of the bridge's own environment a child gets (besides the server's `env`):
 * enough to find programs and a home directory, never the bridge's tokens.
 */
export const INHERITED_ENV = ['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'TERM', 'TMPDIR', 'LANG', 'LC_ALL', 'SYSTEMROOT', 'APPDATA', 'USERPROFILE'];

/** A read this large filled libuv's buffer: the server writes faster than the bridge reads. */
const FULL_READ_BYTES = 65_536;

/** Lines that are not JSON a server may write in a second; one more and it is closed. */
export const MAX_NOT_JSON_PER_S = 1000;

/** Characters of one stderr line the log shows; the rest is counted. */
export const STDERR_SHOWN = 2048;

const GROUPS = process.platform !== 'win32';
const live = new Set<ChildProcess>();
let exitHookInstalled = false;

/** Signals the child's whole process group (npx -> sh -> node), or just the child on Windows. */
function signal(child: ChildProcess, sig: NodeJS.Signals): void {
  try {
    if (GROUPS && child.pid !== undefined) process.kill(-child.pid, sig);
    else child.kill(sig);
  } catch {
    // already gone
  }
}

function track(child: ChildProcess): void {
  live.add(child);
  child.once('exit', () => live.delete(child));
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // whatever way the bridge ends, no server it started outlives it
  process.once('exit', () => {
    for (const c of live) signal(c, 'SIGKILL');
  });
}

export class StdioTransport implements Transport {
  private child: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();
  private closing = false;
  private handlers: TransportHandlers | null = null;
  /** The messages sent this turn, not yet written. */
  private batch: Batch | null = null;
  /** Lines that were not JSON in the second since notJsonSince (notJson). */
  private notJsonCount = 0;
  private notJsonSince = -Infinity;
  /** Closed for writing too many lines that are not JSON: nothing more it writes is read. */
  private broken = false;

  constructor(private readonly options: StdioTransportOptions) {}

  /** The child's process id while it runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  start(handlers: TransportHandlers): Promise<void> {
    this.handlers = handlers;
    const { options } = this;
    const env: Record<string, string> = {};
    for (const name of INHERITED_ENV) {
      const value = process.env[name];
      if (value !== undefined) env[name] = value;
    }
    Object.assign(env, options.env);
    const child = spawn(options.command, options.args, { env, cwd: options.cwd, stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true, detached: GROUPS });
    this.child = child;
    track(child);
    const out = new LineReader({
      maxLineBytes: options.maxLineBytes,
      onLine: (line) => this.line(line),
      onOversize: (bytes, id) => {
        options.log.warn(`${options.name} sent a line of ${bytes} bytes, over the ${options.maxLineBytes}-byte limit; dropped`);
        // the request it answers fails now instead of at its timeout
        this.handlers?.dropped?.(id, `is over ${options.maxLineBytes} bytes (CC_UPSTREAM_MAX_MESSAGE_BYTES); dropped`);
      },
      findIds: true,
    });
    const err = new LineReader({
      maxLineBytes: options.maxLineBytes,
      onLine: (line) => options.log.info(`${options.name} stderr: ${line.length > STDERR_SHOWN ? `${line.slice(0, STDERR_SHOWN)}... (${line.length} characters)` : line}`),
      onOversize: (bytes) => options.log.info(`${options.name} stderr: (a line of ${bytes} bytes, not shown)`),
    });
    const stdout = child.stdout;
    const resumeOut = () => stdout?.resume();
    stdout?.on('data', (chunk: Buffer) => {
      // a server that stopped being one (too many lines that are not JSON): the rest is not read
      if (this.broken) return;
      out.push(chunk);
      // a full read means the server writes faster than the bridge reads (libuv reads up to 32 of them
      // in one go): the next waits for the next turn of the event loop, so links, calls and other
      // servers are served in between. Before, a server writing without pause held the event loop for
      // seconds at a time (every HTTP request took 0.5-10 s instead of 20 ms)
      if (chunk.length >= FULL_READ_BYTES && stdout !== null) {
        stdout.pause();
        setImmediate(resumeOut);
      }
    });
    child.stdout?.on('end', () => out.end());
    child.stderr?.on('data', (chunk: Buffer) => err.push(chunk));
    child.stderr?.on('end', () => err.end());
    // writing to a child that already exited is reported by 'exit'; the pipe error itself is noise
    child.stdin?.on('error', (e) => options.log.debug(`${options.name} stdin: ${e.message}`));
    let spawnFailed = () => {};
    this.exited = new Promise((resolve) => {
      spawnFailed = resolve;
      child.once('exit', (code, sig) => {
        resolve();
        // whatever it started dies with it
        signal(child, 'SIGKILL');
        const how = sig ? `was killed by ${sig}` : `exited with code ${code}`;
        if (!this.closing) options.log.warn(`${options.name} ${how}`);
        handlers.close(`the process ${how}`);
      });
    });
    return new Promise((resolve, reject) => {
      child.once('spawn', () => {
        child.off('error', reject);
        child.on('error', (e) => options.log.warn(`${options.name}: ${e.message}`));
        resolve();
      });
      child.once('error', (e: NodeJS.ErrnoException) => {
        // no process, so no 'exit' will come
        this.child = null;
        spawnFailed();
        const reason = e.code === 'ENOENT' ? `command not found: ${options.command}` : e.message;
        handlers.close(`cannot start: ${reason}`);
        reject(new Error(`cannot start ${options.command}: ${reason}`));
      });
    });
  }

  send(message: unknown): Promise<void> {
    return this.queue(encodeLine(message));
  }

  /** The same line as send({ jsonrpc: '2.0', id, method, params }), its envelope written as text. */
  sendRequest(id: number, method: string, params: unknown): Promise<void> {
    return this.queue(requestLine(id, method, params));
  }

  private queue(line: string): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || !stdin.writable || this.closing) return Promise.reject(new Error('the process is not running'));
    // messages sent in one turn of the event loop leave in one write of one string (one syscall under
    // load, not one each), after the loop's I/O phase; they share one promise and one write callback
    // (a write to a pipe fails for all of them together), not one each
    let batch = this.batch;
    if (batch === null) {
      batch = this.batch = new Batch();
      setImmediate(flush, this);
    }
    batch.text += line;
    return batch.promise;
  }

  /** Writes the messages of this turn (setImmediate, or close before it ends stdin). */
  flush(): void {
    const batch = this.batch;
    if (batch === null) return;
    this.batch = null;
    const stdin = this.child?.stdin;
    if (!stdin || !stdin.writable) batch.done(new Error('the process is not running'));
    else stdin.write(batch.text, batch.done);
  }

  /**
   * Counts a line that is not JSON: past MAX_NOT_JSON_PER_S in a second the server is not speaking
   * MCP (stdout is for its messages alone) and is closed, to be restarted like one that exited. Each
   * such line costs a thrown SyntaxError (25-50 us here), so a server writing them without pause held
   * the bridge's event loop for seconds at a time.
   */
  private notJson(): void {
    const now = Date.now();
    if (now - this.notJsonSince >= 1000) {
      this.notJsonSince = now;
      this.notJsonCount = 0;
    }
    if (++this.notJsonCount <= MAX_NOT_JSON_PER_S) return;
    const reason = `it wrote more than ${MAX_NOT_JSON_PER_S} lines that are not JSON in a second on stdout, which is for MCP messages alone; closed`;
    this.broken = true;
    this.options.log.warn(`${this.options.name}: ${reason}`);
    this.handlers?.close(reason);
    void this.close();
  }

  async close(): Promise<void> {
    const child = this.child;
    if (!child || this.closing) return this.exited;
    this.closing = true;
    if (child.exitCode !== null || child.signalCode !== null) return;
    // what was sent before close leaves before the end of stdin
    this.flush();
    child.stdin?.end();
    const term = setTimeout(() => signal(child, 'SIGTERM'), this.options.termAfterMs ?? 2000);
    const kill = setTimeout(() => signal(child, 'SIGKILL'), this.options.killAfterMs ?? 5000);
    await this.exited;
    clearTimeout(term);
    clearTimeout(kill);
    // the server is gone; anything it left behind in its group goes with it
    signal(child, 'SIGKILL');
  }

  private line(line: string): void {
    if (this.broken) return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      this.options.log.warn(`${this.options.name} wrote a line that is not JSON; ignored: ${line.length > 120 ? `${line.slice(0, 120)}...` : line}`);
      this.notJson();
      return;
    }
    this.handlers?.message(value, line.length);
  }
}

function flush(transport: StdioTransport): void {
  transport.flush();
}

/** The lines of one turn and the promise their senders share. */
class Batch {
  text = '';
  readonly promise: Promise<void>;
  /** The write's callback: settles the promise. */
  readonly done: (err?: Error | null) => void;

  constructor() {
    let settle!: (err?: Error | null) => void;
    this.promise = new Promise<void>((resolve, reject) => {
      settle = (err) => (err ? reject(err) : resolve());
    });
    this.done = settle;
  }
}
