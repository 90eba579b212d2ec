// The process entry, spawned for real: `node dist/index.js` with an environment.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FakeComputer, until } from './helpers.js';
import { VARIABLES } from '../dist/config.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const VERSION = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;

/** Spawns the bridge; our variables come only from `env` (never from the test runner's environment). */
function spawnBridge(env = {}, args = []) {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !VARIABLES.some((v) => v.name === k)));
  const child = spawn(process.execPath, ['dist/index.js', ...args], { cwd: ROOT, env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const out = { stdout: '', stderr: '' };
  child.stdout.setEncoding('utf8').on('data', (c) => (out.stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c) => (out.stderr += c));
  const exited = once(child, 'exit').then(([code, signal]) => ({ code, signal, ...out }));
  return Object.assign(child, { out, exited });
}

/** Starts a bridge on free loopback ports and parses its startup lines. */
async function startProcess(env = {}) {
  const child = spawnBridge({ MCP_PORT: '0', CC_LINK_PORT: '0', CC_LINK_HOST: '127.0.0.1', ...env });
  const early = child.exited.then((r) => {
    throw new Error(`bridge exited early: ${JSON.stringify(r)}`);
  });
  early.catch(() => {});
  await Promise.race([until(() => child.out.stdout.includes('Computer link:')), early]);
  const mcpUrl = /^MCP endpoint: (http:\/\/\S+)$/m.exec(child.out.stdout)?.[1];
  const linkUrl = /^Computer link: (ws:\/\/\S+) /m.exec(child.out.stdout)?.[1];
  assert.ok(mcpUrl && linkUrl, child.out.stdout);
  return Object.assign(child, { mcpUrl, linkUrl });
}

/** A port that is listening (held by this test process) until `close()`. */
async function busyPort() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: server.address().port, close: () => new Promise((resolve) => server.close(resolve)) };
}

const lines = (text) => text.split('\n').filter((l) => l !== '');

async function post(url, body) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, json: JSON.parse(await res.text()) };
}

test('--help (and -h) lists every variable with its default and exits 0 without listening', async () => {
  for (const flag of ['--help', '-h']) {
    const result = await spawnBridge({}, [flag]).exited;
    assert.equal(result.code, 0);
    assert.equal(result.stderr, '');
    assert.match(result.stdout, /^Usage: node dist\/index\.js \[--stdio\]/);
    assert.doesNotMatch(result.stdout, /MCP endpoint/);
    for (const spec of VARIABLES) {
      const line = lines(result.stdout).find((l) => l.trim().startsWith(spec.name + ' '));
      assert.ok(line, `${spec.name} missing from --help`);
      assert.ok(line.includes(spec.meaning), line);
      assert.ok(line.includes(`[${spec.default === '' ? 'empty' : spec.default}]`), line);
    }
  }
});

test('bug: --help said "Usage: node index.js", a command that works from no folder (README has one run node dist/index.js in the checkout); now the path from where it was run, or the command name when started through the package\'s bin link', async () => {
  assert.match((await spawnBridge({}, ['--help']).exited).stdout, /^Usage: node dist\/index\.js \[--stdio\] \[--help\] \[--version\]\n/);
  // a folder of its own: tmpdir() itself holds the checkout when CI clones it under /tmp, and from
  // there the relative path is the one shown
  const away = mkdtempSync(path.join(tmpdir(), 'cc-help-'));
  const elsewhere = spawn(process.execPath, [path.join(ROOT, 'dist/index.js'), '-h'], { cwd: away, stdio: ['ignore', 'pipe', 'inherit'] });
  let text = '';
  elsewhere.stdout.setEncoding('utf8').on('data', (c) => (text += c));
  await once(elsewhere, 'exit');
  rmSync(away, { recursive: true, force: true });
  assert.ok(text.startsWith(`Usage: node ${path.join(ROOT, 'dist/index.js')} [--stdio]`), text.split('\n')[0]);
  // npm's bin link (node_modules/.bin/cc-mcp-bridge) has no .js: the command's own name
  const dir = mkdtempSync(path.join(tmpdir(), 'cc-bin-'));
  symlinkSync(path.join(ROOT, 'dist/index.js'), path.join(dir, 'cc-mcp-bridge'));
  const bin = spawn(process.execPath, [path.join(dir, 'cc-mcp-bridge'), '--help'], { cwd: dir, stdio: ['ignore', 'pipe', 'inherit'] });
  let binText = '';
  bin.stdout.setEncoding('utf8').on('data', (c) => (binText += c));
  await once(bin, 'exit');
  rmSync(dir, { recursive: true, force: true });
  assert.ok(binText.startsWith('Usage: cc-mcp-bridge [--stdio]'), binText.split('\n')[0]);
});

test('--version prints the package version and exits 0', async () => {
  const result = await spawnBridge({}, ['--version']).exited;
  assert.equal(result.code, 0);
  assert.equal(result.stdout, `cc-mcp-bridge ${VERSION}\n`);
});

test('an unknown argument exits 2 with one line', async () => {
  for (const args of [['--port=3000'], ['serve']]) {
    const result = await spawnBridge({}, args).exited;
    assert.equal(result.code, 2, args.join(' '));
    assert.equal(lines(result.stderr).length, 1);
    assert.ok(result.stderr.includes(JSON.stringify(args[0])), result.stderr);
    assert.equal(result.stdout, '');
  }
});

test('a bad value exits 2 before listening, with one stderr line naming the variable and the value', async () => {
  const cases = [
    ['MCP_PORT', 'abc'],
    ['MCP_PORT', '70000'],
    ['CC_LINK_PORT', '-1'],
    ['CC_PROBE_TIMEOUT_MS', '-5'],
    ['CC_EXEC_TIMEOUT_MS', '0'],
    ['CC_HEARTBEAT_MS', '0'],
    ['CC_MAX_FRAME_BYTES', '1MiB'],
    ['MCP_MAX_BODY_BYTES', '12'],
    ['LOG_LEVEL', 'loud'],
    ['MCP_ALLOWED_ORIGINS', '*'],
    ['CC_EXEC_LUA', 'maybe'],
    ['MCP_HOST', 'http://127.0.0.1'],
  ];
  const results = await Promise.all(
    cases.map(([name, value]) =>
      // the other listener's settings are valid, so only the bad value can stop it
      spawnBridge({ MCP_PORT: '0', CC_LINK_PORT: '0', CC_LINK_HOST: '127.0.0.1', [name]: value }).exited,
    ),
  );
  for (const [i, [name, value]] of cases.entries()) {
    const result = results[i];
    assert.equal(result.code, 2, `${name}=${value}: ${JSON.stringify(result)}`);
    const errLines = lines(result.stderr);
    assert.equal(errLines.length, 1, result.stderr);
    assert.ok(errLines[0].includes(name), errLines[0]);
    assert.ok(errLines[0].includes(JSON.stringify(value)), errLines[0]);
    // the startup lines are printed once both listeners are up: nothing was listening
    assert.equal(result.stdout, '');
  }
});

for (const [what, portVariable, otherPort] of [
  ['an MCP port', 'MCP_PORT', 'CC_LINK_PORT'],
  ['a link port', 'CC_LINK_PORT', 'MCP_PORT'],
]) {
  test(`${what} already in use: one clear line, exit 1, no stack trace`, async () => {
    const busy = await busyPort();
    try {
      const env = { [portVariable]: String(busy.port), [otherPort]: '0', CC_LINK_HOST: '127.0.0.1' };
      const result = await spawnBridge(env).exited;
      assert.equal(result.code, 1);
      assert.equal(result.stdout, '');
      const errLines = lines(result.stderr);
      assert.equal(errLines.length, 1, result.stderr);
      assert.ok(errLines[0].includes(`127.0.0.1:${busy.port}`), errLines[0]);
      assert.match(errLines[0], /already in use/);
      assert.doesNotMatch(result.stderr, /\n\s+at /);
    } finally {
      await busy.close();
    }
  });
}

test('MCP on a non-loopback address without MCP_AUTH_TOKEN exits 2 before listening, explaining', async () => {
  const result = await spawnBridge({ MCP_HOST: '0.0.0.0', MCP_PORT: '0', CC_LINK_PORT: '0' }).exited;
  assert.equal(result.code, 2);
  assert.equal(result.stdout, '');
  assert.equal(lines(result.stderr).length, 1, result.stderr);
  assert.match(result.stderr, /refusing to start: MCP_HOST=0\.0\.0\.0 .*MCP_ALLOW_UNAUTHENTICATED=1/);
});

test('without CC_LINK_TOKEN the bridge starts with a warning after its address lines', async () => {
  const bridge = await startProcess();
  await until(() => bridge.out.stderr.includes('CC_LINK_TOKEN is not set'));
  bridge.kill('SIGTERM');
  await bridge.exited;
});

/** Spawns the bridge with its stdout a pipe whose reading end is closed before the bridge writes to it. */
function spawnClosedStdout(env, args) {
  const child = spawnBridge(env, args);
  // closed in this process at once; node's own start takes far longer than this close
  child.stdout.destroy();
  return child;
}

test('bug: a closed stdout outside --stdio (--help | head -0, a bridge whose output pipe closed) is no unhandled EPIPE crash', { timeout: 60_000 }, async () => {
  for (const args of [['--help'], ['--version']]) {
    const result = await spawnClosedStdout({}, args).exited;
    assert.doesNotMatch(result.stderr, /EPIPE|Unhandled/, args[0]);
    assert.equal(result.code, 0, args[0]);
  }
  // the bridge itself: its address lines fail to be written, it goes on serving until signalled
  const bridge = spawnClosedStdout({ MCP_PORT: '0', CC_LINK_PORT: '0', CC_LINK_HOST: '127.0.0.1' });
  await Promise.race([until(() => bridge.out.stderr.includes('note')), bridge.exited]);
  // an EPIPE crash happens on the next tick after the address lines, before any signal is handled
  bridge.kill('SIGTERM');
  const result = await bridge.exited;
  assert.doesNotMatch(result.stderr, /EPIPE|Unhandled/);
  assert.equal(result.code, 0, result.stderr);
});

test('an address that is not ours, or a host name that does not resolve: one clear line, exit 1', async () => {
  const cases = [
    // 192.0.2.0/24 is TEST-NET-1: never an address of this machine
    [{ MCP_HOST: '192.0.2.1', MCP_ALLOW_UNAUTHENTICATED: '1' }, /cannot listen on 192\.0\.2\.1: the address is not an address of this machine \(EADDRNOTAVAIL\); set MCP_HOST to an address of this machine/],
    // .invalid never resolves (RFC 2606); without DNS at all the lookup fails with EAI_AGAIN instead
    [{ CC_LINK_HOST: 'bridge.invalid' }, /cannot listen on bridge\.invalid: the host name (does not resolve \(ENOTFOUND\)|cannot be resolved right now \(EAI_AGAIN\)); check CC_LINK_HOST$/m],
  ];
  for (const [env, expected] of cases) {
    const result = await spawnBridge({ MCP_PORT: '0', CC_LINK_PORT: '0', CC_LINK_HOST: '127.0.0.1', ...env }).exited;
    assert.equal(result.code, 1, JSON.stringify(result));
    assert.equal(result.stdout, '');
    assert.equal(lines(result.stderr).length, 1, result.stderr);
    assert.match(result.stderr, expected);
  }
});

test('bug: a taken port said only "cannot listen on 127.0.0.1:3000: the address is already in use": a user who set neither port had to guess which variable to change; the line now names it', async () => {
  const busy = net.createServer();
  await new Promise((resolve) => busy.listen(0, '127.0.0.1', resolve));
  const { port } = busy.address();
  try {
    const mcp = await spawnBridge({ MCP_PORT: String(port), CC_LINK_PORT: '0', CC_LINK_HOST: '127.0.0.1' }).exited;
    assert.equal(mcp.code, 1);
    assert.equal(mcp.stderr, `cc-mcp-bridge: cannot listen on 127.0.0.1:${port}: the address is already in use (EADDRINUSE); another process holds that port (another cc-mcp-bridge?): stop it, or set MCP_PORT to a free port (0 picks one)\n`);
    const link = await spawnBridge({ MCP_PORT: '0', CC_LINK_PORT: String(port), CC_LINK_HOST: '127.0.0.1' }).exited;
    assert.equal(link.code, 1);
    assert.match(link.stderr, /already in use \(EADDRINUSE\); another process holds that port \(another cc-mcp-bridge\?\): stop it, or set CC_LINK_PORT to a free port \(0 picks one\)\n$/);
  } finally {
    await new Promise((resolve) => busy.close(resolve));
  }
});

test('port 0: the startup lines print the real addresses of both listeners', async () => {
  const bridge = await startProcess({ LOG_LEVEL: 'warn' });
  try {
    assert.equal(lines(bridge.out.stdout)[0], `cc-mcp-bridge ${VERSION}`);
    const mcp = new URL(bridge.mcpUrl);
    const link = new URL(bridge.linkUrl);
    assert.notEqual(mcp.port, '0');
    assert.notEqual(mcp.port, '');
    assert.notEqual(link.port, '0');
    assert.equal(mcp.pathname, '/mcp');
    assert.match(bridge.out.stdout, new RegExp(`program at http://127\\.0\\.0\\.1:${link.port}/mcp-computer\\.lua`));

    const health = await fetch(new URL('/health', bridge.mcpUrl));
    const listening = { state: 'listening', address: link.host };
    assert.deepEqual(await health.json(), { ok: true, computers: 0, link: listening });
    const computer = new FakeComputer(bridge.linkUrl, { computerId: 1 });
    assert.equal((await computer.link()).type, 'hello-ok');
    assert.deepEqual(await (await fetch(new URL('/health', bridge.mcpUrl))).json(), { ok: true, computers: 1, link: listening });
    const ping = await post(bridge.mcpUrl, { jsonrpc: '2.0', id: 0, method: 'ping' });
    assert.deepEqual(ping.json, { jsonrpc: '2.0', id: 0, result: {} });
    bridge.kill('SIGTERM');
    assert.equal((await computer.closed).code, 1001);
  } finally {
    bridge.kill('SIGTERM');
    const { code, signal } = await bridge.exited;
    assert.equal(code, 0);
    assert.equal(signal, null);
  }
});

for (const signal of ['SIGTERM', 'SIGINT']) {
  test(`${signal} with a probe in flight: the call is answered, the link closed with 1001, exit 0`, async () => {
    const bridge = await startProcess({ CC_PROBE_TIMEOUT_MS: '3600000' });
    const quiet = new FakeComputer(bridge.linkUrl, { computerId: 7, computerLabel: 'quiet', onRequest: () => null });
    await quiet.link();
    const call = post(bridge.mcpUrl, { jsonrpc: '2.0', id: 0, method: 'tools/call', params: { name: 'probe-computers', arguments: {} } });
    await quiet.next((f) => f.type === 'request' && f.method === 'ping');
    bridge.kill(signal);

    const res = await call;
    assert.equal(res.status, 200);
    assert.equal(res.json.id, 0);
    assert.equal(res.json.result.content[0].text, 'disconnected from 7 (Label: quiet)');
    assert.equal(res.json.result.structuredContent.computers[0].status, 'disconnected');
    assert.equal((await quiet.closed).code, 1001);
    const result = await bridge.exited;
    assert.equal(result.code, 0);
    assert.equal(result.signal, null);
    assert.ok(result.stderr.includes(`${signal} received; shutting down`), result.stderr);
    assert.doesNotMatch(result.stderr, / error /);
  });
}

test('SIGINT with exec-lua in flight (long timeout): answered isError before exit 0', async () => {
  const bridge = await startProcess();
  const busy = new FakeComputer(bridge.linkUrl, { computerId: 12, computerLabel: 'busy', onRequest: () => null });
  await busy.link();
  const call = post(bridge.mcpUrl, {
    jsonrpc: '2.0',
    id: 'run-1',
    method: 'tools/call',
    params: { name: 'exec-lua', arguments: { computerId: 12, code: 'sleep(1000)', timeoutMs: 300000 } },
  });
  await busy.next((f) => f.type === 'request' && f.method === 'exec-lua');
  bridge.kill('SIGINT');
  const res = await call;
  assert.equal(res.status, 200);
  assert.equal(res.json.id, 'run-1');
  assert.equal(res.json.result.isError, true);
  assert.match(res.json.result.content[0].text, /dropped|shutting down/);
  assert.equal((await busy.closed).code, 1001);
  const result = await bridge.exited;
  assert.equal(result.code, 0);
  assert.equal(result.signal, null);
});

test('a second signal during shutdown does not start a second shutdown', async () => {
  const bridge = await startProcess();
  // a client stuck halfway through its request keeps the shutdown waiting until it goes away
  const stuck = net.connect(Number(new URL(bridge.mcpUrl).port), '127.0.0.1');
  stuck.on('error', () => {});
  await once(stuck, 'connect');
  // headers with Expect: 100-continue, then no body: node answers 100 Continue once it has read the
  // headers, so the bridge is known to hold a request in progress before the signal (a connection
  // it had not read yet would count as one that never sent anything, which shutdown ends at once)
  let answered = '';
  stuck.on('data', (c) => (answered += c.toString('latin1')));
  stuck.write(
    'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
      'Accept: application/json, text/event-stream\r\nContent-Length: 64\r\nExpect: 100-continue\r\n\r\n',
  );
  await until(() => answered.startsWith('HTTP/1.1 100 Continue'));
  bridge.kill('SIGTERM');
  await until(() => bridge.out.stderr.includes('SIGTERM received; shutting down'));
  bridge.kill('SIGINT');
  await until(() => bridge.out.stderr.includes('SIGINT received; already shutting down'));
  stuck.destroy();
  const result = await bridge.exited;
  assert.equal(result.code, 0);
  assert.equal(result.signal, null);
  assert.equal(result.stderr.match(/received; shutting down/g).length, 1);
});

test('shutdown does not wait for clients that never cooperate: exit 0 on its own', { timeout: 30_000 }, async () => {
  const bridge = await startProcess();
  // an MCP client stuck halfway through its headers
  const stuckHttp = net.connect(Number(new URL(bridge.mcpUrl).port), '127.0.0.1');
  stuckHttp.on('error', () => {});
  await once(stuckHttp, 'connect');
  stuckHttp.write('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n');
  // a computer that completes the WebSocket upgrade and hello, then never answers anything (not even a close)
  const link = new URL(bridge.linkUrl);
  const stuckLink = net.connect(Number(link.port), link.hostname);
  stuckLink.on('error', () => {});
  let received = Buffer.alloc(0);
  stuckLink.on('data', (c) => (received = Buffer.concat([received, c])));
  await once(stuckLink, 'connect');
  stuckLink.write(
    `GET / HTTP/1.1\r\nHost: ${link.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
  );
  await until(() => received.includes('\r\n\r\n'));
  assert.match(received.toString('latin1'), /^HTTP\/1\.1 101 /);
  // a masked text frame carrying the hello
  const hello = Buffer.from(JSON.stringify({ type: 'hello', computerId: 99 }));
  const mask = Buffer.from([1, 2, 3, 4]);
  stuckLink.write(Buffer.concat([Buffer.from([0x81, 0x80 | hello.length]), mask, hello.map((b, i) => b ^ mask[i % 4])]));
  await until(() => received.includes('hello-ok'));

  bridge.kill('SIGTERM');
  const result = await bridge.exited;
  assert.equal(result.code, 0);
  assert.equal(result.signal, null);
  // the link was told why: a close frame with code 1001
  const at = received.lastIndexOf(0x88);
  assert.ok(at !== -1, 'a close frame');
  assert.equal(received.readUInt16BE(at + 2), 1001);
  stuckHttp.destroy();
  stuckLink.destroy();
});
