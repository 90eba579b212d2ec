// CC_LINK_PINS_FILE: pins kept across restarts, with real files in a temp directory and the bridge
// process really restarted. The bug: pins lived in memory only, so after a restart any process that
// reached the link port could take a computer's id with its own key before the real computer relinked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createHash } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, readdirSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FakeComputer, startTestBridge, until } from '../helpers.js';
import { VARIABLES } from '../../dist/config.js';
import { BYTES_PER_PIN, PinsFileError, formatPins, parsePins, readPinsFile } from '../../dist/link/pins-file.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const KEY = 'realKey_0123456789abcdefABCDEF-x';
const OTHER = 'impostorKey_0123456789abcdefABCD';
const sha = (key) => createHash('sha256').update(key).digest('hex');
const hello = (computerId, key) => ({ type: 'hello', computerId, ...(key === undefined ? {} : { key }) });

const closers = new WeakMap();
/** A temp dir removed after the test, once what `closeFirst` registered (bridges writing there) is closed. */
function tempDir(t) {
  const dir = mkdtempSync(join(tmpdir(), 'pins-'));
  const list = [];
  closers.set(t, list);
  t.after(async () => {
    for (const close of list) await close();
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}
const closeFirst = (t, close) => closers.get(t).push(close);

/** Spawns `node dist/index.js`; our variables come only from `env`. */
function spawnBridge(env) {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !VARIABLES.some((v) => v.name === k)));
  const child = spawn(process.execPath, ['dist/index.js'], {
    cwd: ROOT,
    env: { ...base, MCP_PORT: '0', CC_LINK_PORT: '0', CC_LINK_HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = { stdout: '', stderr: '' };
  child.stdout.setEncoding('utf8').on('data', (c) => (out.stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c) => (out.stderr += c));
  const exited = once(child, 'exit').then(([code, signal]) => ({ code, signal, ...out }));
  return Object.assign(child, { out, exited });
}

async function startProcess(t, env) {
  const child = spawnBridge(env);
  closeFirst(t, async () => {
    if (child.exitCode !== null) return;
    child.kill('SIGKILL');
    await child.exited;
  });
  const early = child.exited.then((r) => {
    throw new Error(`bridge exited early: ${JSON.stringify(r)}`);
  });
  early.catch(() => {});
  await Promise.race([until(() => child.out.stdout.includes('Computer link:')), early]);
  const mcpUrl = /^MCP endpoint: (http:\/\/\S+)$/m.exec(child.out.stdout)[1];
  const linkUrl = /^Computer link: (ws:\/\/\S+) /m.exec(child.out.stdout)[1];
  return Object.assign(child, { mcpUrl, linkUrl });
}

async function stop(child) {
  child.kill('SIGTERM');
  const r = await child.exited;
  assert.equal(r.code, 0, r.stderr);
  return r;
}

async function attempt(linkUrl, computerId, key) {
  const c = new FakeComputer(linkUrl, { computerId });
  const first = await c.link(hello(computerId, key));
  return { c, first };
}

test('bug: after a restart an impostor took a pinned id first; with CC_LINK_PINS_FILE the pin survives the restart (real process, real file)', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'pins');
  const env = { CC_LINK_PINS_FILE: file };
  const first = await startProcess(t, env);
  assert.match(first.out.stdout + first.out.stderr, /no pins file at .*pins yet: it is written at the first pin/);
  const real = await attempt(first.linkUrl, 5, KEY);
  assert.equal(real.first.type, 'hello-ok');
  const text = await until(() => {
    try {
      const t = readFileSync(file, 'utf8');
      return t.includes(`5 ${sha(KEY)}\n`) && t;
    } catch {
      return false;
    }
  });
  assert.equal(statSync(file).mode & 0o777, 0o600);
  assert.ok(!text.includes(KEY), 'the key itself is never written');
  assert.deepEqual(readdirSync(dir), ['pins'], 'no temporary file is left');
  await real.c.close();
  await stop(first);

  const second = await startProcess(t, env);
  assert.match(second.out.stdout + second.out.stderr, /1 pin read from .*pins/);
  // the impostor comes first after the restart: refused, as before the restart
  const impostor = await attempt(second.linkUrl, 5, OTHER);
  assert.equal(impostor.first.type, 'hello-error');
  assert.equal(impostor.first.code, 'key_mismatch');
  assert.equal((await impostor.c.closed).code, 4409);
  const keyless = await attempt(second.linkUrl, 5, undefined);
  assert.equal(keyless.first.code, 'key_mismatch');
  const again = await attempt(second.linkUrl, 5, KEY);
  assert.equal(again.first.type, 'hello-ok', 'the real computer relinks');
  await again.c.close();
  const r = await stop(second);
  assert.ok(!r.stdout.includes(KEY) && !r.stderr.includes(KEY) && !r.stderr.includes(OTHER));
  assert.equal(readFileSync(file, 'utf8'), text, 'nothing changed, so nothing was rewritten');
});

test('a bad pins file stops the start (exit 2) naming the file, the line and the field; the bridge never runs unpinned', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'pins');
  const cases = [
    [`# mine\n1 ${sha(KEY)}\n2 ${sha(KEY).toUpperCase()}\n`, /line 3: field 2 is not a SHA-256 of 64 lowercase hex digits/],
    [`x ${sha(KEY)}\n`, /line 1: the computer id \(field 1\) is not a whole number >= 0/],
    [`1 ${sha(KEY)} extra\n`, /line 1: expected "<computer id> <SHA-256 hex>", found 3 fields/],
    [`1 ${sha(KEY)}\n\n1 ${sha(OTHER)}\n`, /line 3: computer id 1 is pinned twice/],
    [`1 ${KEY}\n`, /line 1: field 2 is not a SHA-256/],
  ];
  for (const [text, reason] of cases) {
    writeFileSync(file, text);
    const r = await spawnBridge({ CC_LINK_PINS_FILE: file }).exited;
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /^cc-mcp-bridge: invalid pins file: CC_LINK_PINS_FILE \S+pins line \d+: /);
    assert.match(r.stderr, reason);
    assert.doesNotMatch(r.stdout, /MCP endpoint/);
    assert.ok(!r.stderr.includes(KEY), 'a key written there by mistake is not echoed');
  }
  writeFileSync(file, `1 ${sha(KEY)}\n2 ${sha(OTHER)}\n3 ${sha('c'.repeat(20))}\n`);
  const over = await spawnBridge({ CC_LINK_PINS_FILE: file, CC_LINK_MAX_PINS: '2' }).exited;
  assert.equal(over.code, 2);
  assert.match(over.stderr, /line 3: more than CC_LINK_MAX_PINS \(2\) pins/);
  const missingDir = await spawnBridge({ CC_LINK_PINS_FILE: join(dir, 'nowhere', 'pins') }).exited;
  assert.equal(missingDir.code, 2);
  assert.match(missingDir.stderr, /nowhere\/pins: neither the file nor its directory \S+nowhere exists/);
  const isDir = await spawnBridge({ CC_LINK_PINS_FILE: dir }).exited;
  assert.equal(isDir.code, 2);
  assert.match(isDir.stderr, /: is not a file/);
});

test('config: a pins file with CC_LINK_PIN=off is refused (exit 2)', async (t) => {
  const dir = tempDir(t);
  const off = await spawnBridge({ CC_LINK_PIN: 'off', CC_LINK_PINS_FILE: join(dir, 'pins') }).exited;
  assert.equal(off.code, 2);
  assert.match(off.stderr, /CC_LINK_PINS_FILE="\S+": CC_LINK_PIN is off/);
  const bad = await spawnBridge({ CC_LINK_PIN: 'sometimes' }).exited;
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /CC_LINK_PIN="sometimes": expected on, off or strict/);
});

test('pins file: many new ids in a burst are all written (changes during a write are written after it), the file reads back whole', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'pins');
  const bridge = await startTestBridge({ CC_LINK_PINS_FILE: file });
  closeFirst(t, () => bridge.close());
  const keyOf = (id) => `key_${String(id).padStart(12, '0')}_abcdefghij`;
  const computers = await Promise.all(
    Array.from({ length: 40 }, async (_, id) => {
      const { c, first } = await attempt(bridge.linkUrl, id, keyOf(id));
      assert.equal(first.type, 'hello-ok');
      return c;
    }),
  );
  await until(() => {
    try {
      return parsePins(readFileSync(file, 'utf8'), file, 100).size === 40;
    } catch {
      return false;
    }
  });
  const pins = parsePins(readFileSync(file, 'utf8'), file, 100);
  for (let id = 0; id < 40; id++) assert.equal(pins.get(id), sha(keyOf(id)));
  assert.equal(readFileSync(file, 'utf8').split('\n')[1], `0 ${sha(keyOf(0))}`, 'ids in order');
  await Promise.all(computers.map((c) => c.close()));
});

test('pins file: a write that fails is logged and counted, the pin is kept in memory, and the next change writes everything', async (t) => {
  const dir = tempDir(t);
  const sub = join(dir, 'sub');
  mkdirSync(sub);
  const file = join(sub, 'pins');
  const bridge = await startTestBridge({ CC_LINK_PINS_FILE: file });
  closeFirst(t, () => bridge.close());
  rmSync(sub, { recursive: true });
  const a = await attempt(bridge.linkUrl, 1, KEY);
  assert.equal(a.first.type, 'hello-ok');
  const line = await until(() => bridge.logs.find((l) => l.includes('cannot write the pins file')));
  assert.match(line, /cannot write the pins file \S+sub\/pins \(ENOENT\); the pins are kept in memory and written at the next change/);
  const metrics = await (await fetch(bridge.mcpUrl.replace(/\/mcp$/, '/metrics'))).text();
  assert.match(metrics, /cc_link_pins_file_errors_total 1/);
  // still pinned in memory
  const impostor = await attempt(bridge.linkUrl, 1, OTHER);
  assert.equal(impostor.first.code, 'key_mismatch');
  mkdirSync(sub);
  const b = await attempt(bridge.linkUrl, 2, OTHER);
  assert.equal(b.first.type, 'hello-ok');
  await until(() => {
    try {
      return readFileSync(file, 'utf8').includes(`2 ${sha(OTHER)}`);
    } catch {
      return false;
    }
  });
  assert.deepEqual([...parsePins(readFileSync(file, 'utf8'), file, 10)], [
    [1, sha(KEY)],
    [2, sha(OTHER)],
  ]);
  await a.c.close();
  await b.c.close();
});

test('pins file reader: a file with looser permissions is read with a warning, comments and blank lines are skipped, formatPins reads back', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'pins');
  writeFileSync(file, `${formatPins([[3, sha(KEY)], [12, sha(OTHER)]])}\n  # a note\n\n`, { mode: 0o644 });
  const loaded = readPinsFile(file, 10);
  assert.equal(loaded.existed, true);
  assert.equal(loaded.loose, true);
  assert.deepEqual([...loaded.pins], [
    [3, sha(KEY)],
    [12, sha(OTHER)],
  ]);
  const bridge = await startTestBridge({ CC_LINK_PINS_FILE: file });
  closeFirst(t, () => bridge.close());
  assert.ok(bridge.logs.some((l) => /the pins file \S+ may be read or written by others than its owner/.test(l)), bridge.logs.join('\n'));
  assert.ok(bridge.logs.some((l) => /2 pins read from/.test(l)));
  const refused = await attempt(bridge.linkUrl, 12, KEY);
  assert.equal(refused.first.code, 'key_mismatch');
  assert.throws(() => readPinsFile(file, 1), PinsFileError);
  const over = BYTES_PER_PIN + formatPins([]).length + 1;
  writeFileSync(file, 'x'.repeat(over));
  assert.throws(() => readPinsFile(file, 1), new RegExp(`${over} bytes is more than CC_LINK_MAX_PINS \\(1\\) pins take`));
});

test('bug: a --stdio bridge that took the link port over from another sharing CC_LINK_PINS_FILE used the pins it read at its own start: the pins made since were open to an impostor and its next write dropped them; now it reads the file again on taking over', async (t) => {
  const { startBridge } = await import('../../dist/bridge.js');
  const { loadConfig } = await import('../../dist/config.js');
  const { createLogger } = await import('../../dist/log.js');
  const net = await import('node:net');
  const dir = tempDir(t);
  const file = join(dir, 'pins');
  const free = net.createServer();
  await new Promise((resolve) => free.listen(0, '127.0.0.1', resolve));
  const port = free.address().port;
  await new Promise((resolve) => free.close(resolve));
  const config = loadConfig({ MCP_PORT: '0', CC_LINK_PORT: String(port), CC_LINK_HOST: '127.0.0.1', LOG_LEVEL: 'debug', CC_LINK_PINS_FILE: file });
  const logs = [];
  const holder = await startBridge(config, createLogger('debug', () => {}));
  closeFirst(t, () => holder.close());
  const waiting = await startBridge(config, createLogger('debug', (l) => logs.push(l)), { linkRetryMs: 20 });
  closeFirst(t, () => waiting.close());
  assert.equal(waiting.linkStatus().state, 'waiting');
  // computer 1 links to the bridge holding the port, after the waiting one read the (empty) file
  const real = await attempt(holder.linkUrl, 1, KEY);
  assert.equal(real.first.type, 'hello-ok');
  await until(() => {
    try {
      return readFileSync(file, 'utf8').includes(`1 ${sha(KEY)}`);
    } catch {
      return false;
    }
  });
  await holder.close();
  await until(() => waiting.linkStatus().state === 'listening');
  assert.ok(logs.some((l) => /link port taken over: 1 pin read again from \S+pins/.test(l)), logs.join('\n'));
  const impostor = await attempt(waiting.linkUrl, 1, OTHER);
  assert.equal(impostor.first.code, 'key_mismatch', 'the pin made on the other bridge holds');
  const two = await attempt(waiting.linkUrl, 2, OTHER);
  assert.equal(two.first.type, 'hello-ok');
  await until(() => readFileSync(file, 'utf8').includes(`2 ${sha(OTHER)}`));
  assert.deepEqual([...parsePins(readFileSync(file, 'utf8'), file, 10)], [
    [1, sha(KEY)],
    [2, sha(OTHER)],
  ], 'the next write keeps the other bridge\'s pin');
  const again = await attempt(waiting.linkUrl, 1, KEY);
  assert.equal(again.first.type, 'hello-ok');
  await Promise.all([two.c.close(), again.c.close()]);
});

test('taking the link port over with a pins file that cannot be read then: an error naming the file and line, and the bridge keeps the pins it holds', async (t) => {
  const { startBridge } = await import('../../dist/bridge.js');
  const { loadConfig } = await import('../../dist/config.js');
  const { createLogger } = await import('../../dist/log.js');
  const net = await import('node:net');
  const dir = tempDir(t);
  const file = join(dir, 'pins');
  writeFileSync(file, `7 ${sha(KEY)}\n`, { mode: 0o600 });
  const free = net.createServer();
  await new Promise((resolve) => free.listen(0, '127.0.0.1', resolve));
  const port = free.address().port;
  await new Promise((resolve) => free.close(resolve));
  const config = loadConfig({ MCP_PORT: '0', CC_LINK_PORT: String(port), CC_LINK_HOST: '127.0.0.1', LOG_LEVEL: 'debug', CC_LINK_PINS_FILE: file });
  const logs = [];
  const holder = await startBridge(config, createLogger('debug', () => {}));
  closeFirst(t, () => holder.close());
  const waiting = await startBridge(config, createLogger('debug', (l) => logs.push(l)), { linkRetryMs: 20 });
  closeFirst(t, () => waiting.close());
  writeFileSync(file, 'not a pin\n');
  await holder.close();
  await until(() => waiting.linkStatus().state === 'listening');
  const line = logs.find((l) => l.includes('link port taken over, but'));
  assert.match(line, /link port taken over, but CC_LINK_PINS_FILE \S+pins line 1: expected "<computer id> <SHA-256 hex>", found 3 fields; keeping the 1 pin this bridge holds/);
  const impostor = await attempt(waiting.linkUrl, 7, OTHER);
  assert.equal(impostor.first.code, 'key_mismatch', 'the pin read at start still holds');
});

test('pins file reader edges: the size limit to the byte, a file only its group may read is loose, a bare "# distrusted" line, openings with a date that is not one, unconfirmed ids past the safe integers', async (t) => {
  const { parseDistrusted, parseOpenings, parseUnconfirmed } = await import('../../dist/link/pins-file.js');
  const dir = tempDir(t);
  const file = join(dir, 'pins');
  // CC_LINK_MAX_PINS pins of BYTES_PER_PIN each (the pin's lines and its label's) after the header: a file of
  // exactly that is read, one byte more is refused
  assert.equal(BYTES_PER_PIN, 256 + 32 + 6 * 1024 + 2);
  const limit = 2 * BYTES_PER_PIN + formatPins([]).length;
  const body = `3 ${sha(KEY)}\n`;
  writeFileSync(file, `${formatPins([])}${body}#${'x'.repeat(limit - formatPins([]).length - body.length - 2)}\n`, { mode: 0o600 });
  assert.equal(statSync(file).size, limit);
  assert.deepEqual([...readPinsFile(file, 2).pins], [[3, sha(KEY)]]);
  // loose: any permission for the group or others (0640 too), none for 0600
  chmodSync(file, 0o600);
  assert.equal(readPinsFile(file, 2).loose, false);
  chmodSync(file, 0o640);
  assert.equal(readPinsFile(file, 2).loose, true);
  writeFileSync(file, `${readFileSync(file, 'utf8')}\n`);
  assert.throws(() => readPinsFile(file, 2), new RegExp(`${limit + 1} bytes is more than CC_LINK_MAX_PINS \\(2\\) pins take`));
  // "# distrusted" with nothing after it is a damaged line, not a comment
  for (const line of ['# distrusted', '#distrusted   ']) {
    assert.throws(() => parseDistrusted(`${line}\n`, 'f', 10), /CC_LINK_PINS_FILE f line 1: expected "# distrusted <computer id>/, line);
  }
  assert.deepEqual([...parseDistrusted('# distrustedly yours\n', 'f', 10)], [], 'another word is a comment');
  // an opening whose end is no date is no opening; an unconfirmed id past 2^53 is no id
  assert.deepEqual([...parseOpenings('# open 5 until 2026-13-45T00:00:00Z\n# open 6 until 2026-11-24T12:00:00Z\n')], [[6, Date.parse('2026-11-24T12:00:00Z')]]);
  assert.deepEqual(parseUnconfirmed('# unconfirmed 9999999999999999\n# unconfirmed 12\n'), [12]);
});

test('removeStaleTemps: removes our temporary files from 10 minutes old exactly (beside a symlinked file\'s target), and nothing else: not a younger one, another file\'s, a directory or a symlink named like ours', async (t) => {
  const { removeStaleTemps, STALE_TEMP_MS } = await import('../../dist/link/pins-file.js');
  const { symlinkSync, utimesSync, lutimesSync, existsSync } = await import('node:fs');
  const dir = tempDir(t);
  const file = join(dir, 'pins');
  writeFileSync(file, formatPins([]), { mode: 0o600 });
  const at = Date.parse('2026-11-24T12:00:00Z');
  const made = (name, kind = 'file') => {
    const p = join(dir, name);
    if (kind === 'dir') mkdirSync(p);
    else if (kind === 'link') symlinkSync(file, p);
    else writeFileSync(p, 'x');
    (kind === 'link' ? lutimesSync : utimesSync)(p, at / 1000, at / 1000);
    return p;
  };
  made('pins.41.aaaaaaaaaaaa.tmp');
  made('pins.42.tmp');
  made('pinz.43.tmp'); // same length as "pins": only the name tells it is another file's
  made('other.44.tmp');
  made('pins.45.tmp', 'dir');
  made('pins.46.tmp', 'link');
  const now = at + STALE_TEMP_MS;
  assert.deepEqual(await removeStaleTemps(file, STALE_TEMP_MS, now - 1), { removed: [], failed: [] }, 'younger than 10 minutes by 1 ms');
  const { removed, failed } = await removeStaleTemps(file, STALE_TEMP_MS, now);
  assert.deepEqual(removed.sort(), ['pins.41.aaaaaaaaaaaa.tmp', 'pins.42.tmp']);
  assert.deepEqual(failed, []);
  for (const kept of ['pinz.43.tmp', 'other.44.tmp', 'pins.45.tmp', 'pins.46.tmp']) assert.ok(existsSync(join(dir, kept)), kept);
  assert.equal(readFileSync(file, 'utf8'), formatPins([]), 'the file the symlink points to is untouched');
  // CC_LINK_PINS_FILE a symlink: the writes (and so their leftovers) are beside its target
  mkdirSync(join(dir, 'real'));
  writeFileSync(join(dir, 'real', 'target'), formatPins([]), { mode: 0o600 });
  symlinkSync(join(dir, 'real', 'target'), join(dir, 'linked'));
  made('real/target.47.tmp');
  made('linked.48.tmp');
  assert.deepEqual((await removeStaleTemps(join(dir, 'linked'), STALE_TEMP_MS, now)).removed, ['target.47.tmp']);
});

test('PinsWriter: a write whose rename fails (the path is now a directory) is reported and leaves no temporary file behind', async (t) => {
  const { PinsWriter } = await import('../../dist/link/pins-file.js');
  const dir = tempDir(t);
  const file = join(dir, 'pins');
  mkdirSync(file);
  writeFileSync(join(file, 'inside'), 'x'); // a directory with something in it: nothing renames over it
  const errors = [];
  const writer = new PinsWriter(file, () => [[3, sha(KEY)]], (line) => errors.push(line));
  await writer.changed();
  assert.equal(errors.length, 1);
  assert.match(errors[0], /^cannot write the pins file \S+ \((EISDIR|ENOTEMPTY|EEXIST)\); the pins are kept in memory and written at the next change$/);
  assert.equal(writer.failures, 1);
  assert.deepEqual(readdirSync(dir), ['pins'], 'the temporary file was removed');
});

test('bug: a pin\'s digest read from the pins file was a slice of the whole file\'s text, so the table held all of it (labels and comments too) for as long as one such pin lived; now each digest and distrusted key is a copy of its own', { timeout: 90_000 }, async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'pins');
  // 2,000 pins, each with a label of 1,000 characters, one of them past Latin-1 (the text read is then
  // two bytes a character): about 4 MB of text the table must not keep; and 2,000 distrusted keys
  const n = 2000;
  const pins = [], distrusted = [], labels = [];
  for (let id = 0; id < n; id++) {
    pins.push([id, sha(`pin${id}`)]);
    distrusted.push([n + id, sha(`old${id}`)]);
    labels.push([id, `\u263a${'l'.repeat(998)}${id % 10}`]);
  }
  writeFileSync(file, formatPins(pins, [], distrusted, [], labels), { mode: 0o600 });
  const textBytes = 2 * readFileSync(file, 'utf8').length;
  assert.ok(textBytes > 4_000_000, String(textBytes));
  // its own process, so that nothing else of a test run moves its heap; what each map alone keeps alive
  const script = `
    import { readPinsFile } from ${JSON.stringify(new URL('../../dist/link/pins-file.js', import.meta.url).href)};
    const settle = async () => { await new Promise((r) => setTimeout(r, 20)); gc(); gc(); return process.memoryUsage().heapUsed; };
    const keep = (which) => { const loaded = readPinsFile(${JSON.stringify(file)}, ${2 * n}); return [loaded[which], loaded[which].size]; };
    const out = {};
    for (const which of ['pins', 'distrusted']) {
      const before = await settle();
      let held = keep(which);
      out[which] = (await settle()) - before;
      if (held[1] !== ${n}) throw new Error(which + ' ' + held[1]);
      held = null;
    }
    console.log(JSON.stringify(out));`;
  const child = spawn(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  const [code] = await once(child, 'exit');
  assert.equal(code, 0, out);
  const held = JSON.parse(out);
  t.diagnostic(`heap held: ${out.trim()}; the text ${textBytes} bytes`);
  // a copy of each digest: about 2,000 x 150 bytes with the map; the text itself is 4 MB
  for (const which of ['pins', 'distrusted']) assert.ok(held[which] < textBytes / 8, `${which}: ${held[which]} bytes of heap held for ${n} entries (the file's text is ${textBytes} bytes)`);
});
