// A stdio bridge whose link port another process holds (two Claude Code sessions with the same stdio
// entry): it serves MCP with no computers, says why, and takes the port over once it frees.
// Real processes, real sockets; deadlines only as hang guards.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { VARIABLES } from '../../dist/config.js';
import { FakeComputer, pongText, until } from '../helpers.js';
import { INIT, run, spawnStdio } from './stdio-child.js';

/** A port that is listening (held by this test process) until `close()`. */
async function busyPort() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: server.address().port, close: () => new Promise((resolve) => server.close(resolve)) };
}

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const nonEmpty = (text) => text.split('\n').filter((l) => l !== '');

let nextId = 1;
async function call(bridge, name, args = {}) {
  const id = nextId++;
  bridge.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
  return (await bridge.answer(id)).result;
}

async function httpBase(bridge) {
  await until(() => /also over HTTP at http:\/\/\S+/.test(bridge.out.stderr));
  return /also over HTTP at (http:\/\/\S+)\/mcp/.exec(bridge.out.stderr)[1];
}

const health = async (base) => (await fetch(`${base}/health`)).json();
const listening = async (base) => /^cc_link_listening (\d)$/m.exec(await (await fetch(`${base}/metrics`)).text())?.[1];

test('stdio: a second bridge on a taken link port answers MCP, says why there are no computers, and takes the port over when the first quits', async () => {
  const first = spawnStdio();
  try {
    const linkUrl = await first.linkUrl();
    const port = new URL(linkUrl).port;
    // a computer linked to the first bridge: the second one must not see it
    const old = new FakeComputer(linkUrl, { computerId: 7 });
    assert.equal((await old.link()).type, 'hello-ok');

    await run({ CC_LINK_PORT: port, CC_LINK_RETRY_MS: '200', MCP_PORT: '0' }, async (second) => {
      second.send({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: INIT });
      assert.equal((await second.answer('init')).result.protocolVersion, '2025-06-18');
      second.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      second.send({ jsonrpc: '2.0', id: 'list', method: 'tools/list' });
      const names = (await second.answer('list')).result.tools.map((t) => t.name);
      assert.ok(names.includes('probe-computers') && names.includes('list-computers'), names.join(','));

      const why = `the link port 127.0.0.1:${port} is in use by another process (another cc-mcp-bridge?); this bridge takes it over when it frees (retrying every 200 ms).`;
      const probe = await call(second, 'probe-computers');
      assert.deepEqual(probe.content, [{ type: 'text', text: `No computers connected: ${why}` }]);
      // Claude Code hands the model structuredContent, not the text: the reason is there too
      assert.deepEqual(probe.structuredContent, { computers: [], note: `No computers connected: ${why}` });
      const list = await call(second, 'list-computers');
      assert.equal(list.content[0].text, `No computers are linked: ${why}`);
      assert.deepEqual(list.structuredContent, { computers: [], note: `No computers are linked: ${why}` });
      // a tool aimed at one computer says the same after its own sentence
      const exec = await call(second, 'exec-lua', { computerId: 7, code: 'return 1' });
      assert.equal(exec.isError, true);
      assert.equal(exec.content[0].text, `No linked computer has id 7. No computers are linked: ${why}`);

      const base = await httpBase(second);
      const waiting = await health(base);
      assert.equal(waiting.computers, 0);
      assert.equal(waiting.link.state, 'waiting');
      assert.equal(waiting.link.address, `127.0.0.1:${port}`);
      assert.equal(waiting.link.retryMs, 200);
      assert.equal(waiting.link.reason, why.slice(0, -1));
      assert.equal(await listening(base), '0');
      assert.match(second.out.stderr, new RegExp(`^Computer link: ws://127\\.0\\.0\\.1:${port} \\(.*not listening yet: the port is in use by another process`, 'm'));

      // the first session quits: its computer is closed with 1001 and its port freed
      first.stdin.end();
      assert.equal((await first.exited).code, 0);
      assert.equal((await old.closed).code, 1001);
      await until(async () => (await health(base)).link.state === 'listening');
      assert.deepEqual((await health(base)).link, { state: 'listening', address: `127.0.0.1:${port}` });
      assert.equal(await listening(base), '1');

      // computers reconnect to the same address, now served by the second bridge
      const back = new FakeComputer(linkUrl, { computerId: 7 });
      assert.equal((await back.link()).type, 'hello-ok');
      const pong = await call(second, 'probe-computers');
      assert.deepEqual(pong.content, [{ type: 'text', text: pongText(7, null) }]);
      assert.equal(pong.structuredContent.note, undefined);
      await back.close();

      second.stdin.end();
      const r = await second.exited;
      assert.equal(r.code, 0);
      // said once however many retries failed, and the takeover said once
      assert.equal(r.stderr.match(/is in use by another process/g).length, 2, r.stderr); // the warning and the Computer link line
      assert.equal(r.stderr.match(/warn The link port .* MCP is served meanwhile with no computers linked/g).length, 1, r.stderr);
      assert.equal(r.stderr.match(/is free again: listening on it now/g).length, 1, r.stderr);
    });
  } finally {
    if (first.exitCode === null && first.signalCode === null) first.kill('SIGKILL');
    await first.exited;
  }
});

test('stdio: EOF while waiting for the link port exits 0 at once', async () => {
  const busy = await busyPort();
  try {
    await run({ CC_LINK_PORT: String(busy.port), CC_LINK_RETRY_MS: '600000' }, async (bridge) => {
      bridge.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: INIT });
      await bridge.answer(1);
      bridge.stdin.end();
      const r = await bridge.exited;
      assert.equal(r.code, 0);
      assert.match(r.stderr, /end of input on stdin; shutting down/);
    });
  } finally {
    await busy.close();
  }
});

/** The bridge in HTTP mode (no --stdio); our variables only from `env`. */
async function httpMode(env) {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !VARIABLES.some((v) => v.name === k)));
  const child = spawn(process.execPath, ['dist/index.js'], { cwd: ROOT, env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (c) => (stderr += c));
  const [code] = await once(child, 'exit');
  return { code, stderr };
}

test('a taken link port still exits 1 with one line: stdio with CC_LINK_RETRY_MS=0, and HTTP mode whatever CC_LINK_RETRY_MS says', async () => {
  const busy = await busyPort();
  try {
    const stdio = await run({ CC_LINK_PORT: String(busy.port), CC_LINK_RETRY_MS: '0' }, (bridge) => bridge.exited);
    // HTTP mode: a service should fail fast rather than wait silently
    const http = await httpMode({ CC_LINK_HOST: '127.0.0.1', CC_LINK_PORT: String(busy.port), CC_LINK_RETRY_MS: '200', MCP_PORT: '0' });
    for (const r of [stdio, http]) {
      assert.equal(r.code, 1, r.stderr);
      assert.deepEqual(nonEmpty(r.stderr), [`cc-mcp-bridge: cannot listen on 127.0.0.1:${busy.port}: the address is already in use (EADDRINUSE); another process holds that port (another cc-mcp-bridge?): stop it, or set CC_LINK_PORT to a free port (0 picks one)`]);
    }
  } finally {
    await busy.close();
  }
});

test('stdio: a link listen error other than EADDRINUSE still exits 1 with one line', async () => {
  // 192.0.2.0/24 is TEST-NET-1: never an address of this machine
  const r = await run({ CC_LINK_HOST: '192.0.2.1', CC_LINK_PORT: '0', CC_LINK_RETRY_MS: '200' }, (bridge) => bridge.exited);
  assert.equal(r.code, 1);
  assert.equal(r.stdout, '');
  assert.deepEqual(nonEmpty(r.stderr), ['cc-mcp-bridge: cannot listen on 192.0.2.1: the address is not an address of this machine (EADDRNOTAVAIL); set CC_LINK_HOST to an address of this machine (127.0.0.1, or 0.0.0.0 for every address)']);
});

test('stdio-wait log lines and REST: the banner first, the waiting warning after the Computer link line, the takeover logged at LOG_LEVEL=warn; GET /computers says why it is empty in CC-Link-Note while waiting', async () => {
  const busy = await busyPort();
  let freed = false;
  try {
    await run({ CC_LINK_PORT: String(busy.port), CC_LINK_RETRY_MS: '100', MCP_PORT: '0', LOG_LEVEL: 'warn' }, async (bridge) => {
      const base = await httpBase(bridge);
      await until(() => /MCP is served meanwhile/.test(bridge.out.stderr));
      const lines = nonEmpty(bridge.out.stderr);
      const at = (re) => lines.findIndex((l) => re.test(l));
      // before: the warning was the first line, above the version banner
      assert.ok(at(/^cc-mcp-bridge \d/) === 0, lines.join('\n'));
      assert.ok(at(/^Computer link: /) < at(/warn The link port .* is in use by another process/), lines.join('\n'));

      const why = `No computers are linked: the link port 127.0.0.1:${busy.port} is in use by another process (another cc-mcp-bridge?); this bridge takes it over when it frees (retrying every 100 ms).`;
      const waiting = await fetch(`${base}/computers`);
      assert.equal(waiting.status, 200);
      assert.deepEqual(await waiting.json(), []);
      assert.equal(waiting.headers.get('cc-link-note'), why);
      // a browser page may read it
      const cors = await fetch(`${base}/computers`, { headers: { origin: 'http://localhost:3000' } });
      assert.match(cors.headers.get('access-control-expose-headers') ?? '', /CC-Link-Note/);

      await busy.close();
      freed = true;
      // before: an info line, so at LOG_LEVEL=warn the operator saw the wait but never its end
      await until(() => /warn the link port 127\.0\.0\.1:\d+ is free again: listening on it now/.test(bridge.out.stderr));
      const listening = await fetch(`${base}/computers`);
      assert.deepEqual(await listening.json(), []);
      assert.equal(listening.headers.get('cc-link-note'), null);
      bridge.stdin.end();
      const r = await bridge.exited;
      assert.equal(r.code, 0);
      assert.equal(r.stderr.match(/MCP is served meanwhile/g).length, 1, r.stderr);
    });
  } finally {
    if (!freed) await busy.close();
  }
});
