import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import WebSocket from 'ws';
import { FakeComputer, callTool, linkComputer, pongText, withBridge, until } from '../helpers.js';
import { LUA_PROGRAM_PATH } from '../../dist/bridge.js';
import { startLinkServer } from '../../dist/link/server.js';
import { LinkRegistry } from '../../dist/link/registry.js';
import { createLogger } from '../../dist/log.js';
import { closeReason } from '../../dist/link/hello.js';

test('valid hello registers the computer and gets hello-ok; log says linked', () =>
  withBridge({}, async (bridge) => {
    const computer = await linkComputer(bridge, { computerId: 4, computerLabel: 'miner' });
    const link = bridge.links.get(4);
    assert.equal(link.label, 'miner');
    assert.match(link.remoteAddress, /^127\.0\.0\.1:\d+$/);
    assert.ok(link.connectedAt <= link.lastSeenAt);
    assert.ok(bridge.logs.some((l) => /info linked 4 \(Label: miner\) from 127\.0\.0\.1/.test(l)));
    await computer.close();
    await until(() => bridge.links.size === 0);
    assert.ok(bridge.logs.some((l) => /info unlinked 4 \(Label: miner\): closed 1000/.test(l)));
  }));

test('invalid hello gets hello-error and close 1008, and registers nothing', () =>
  withBridge({}, async (bridge) => {
    const computer = new FakeComputer(bridge.linkUrl);
    const first = await computer.link({ type: 'hello', computerId: 'twelve' });
    assert.equal(first.type, 'hello-error');
    assert.match(first.error, /computerId must be an integer/);
    assert.equal((await computer.closed).code, 1008);
    assert.equal(bridge.links.size, 0);
  }));

test('a first frame that is not a hello gets hello-error and close 1008', () =>
  withBridge({}, async (bridge) => {
    const computer = new FakeComputer(bridge.linkUrl);
    const first = await computer.link({ type: 'response', id: 'x', ok: true });
    assert.equal(first.type, 'hello-error');
    assert.match(first.error, /first frame must be a hello/);
    assert.equal((await computer.closed).code, 1008);
  }));

test('a socket that never says hello is closed with 1008', async () => {
  const registry = new LinkRegistry();
  const lines = [];
  const server = await startLinkServer(registry, createLogger('debug', (l) => lines.push(l)), {
    host: '127.0.0.1',
    port: 0,
    heartbeatMs: 60_000,
    maxFrameBytes: 1 << 20,
    helloTimeoutMs: 20,
    luaProgramPath: LUA_PROGRAM_PATH,
  });
  try {
    const ws = new WebSocket(`ws://127.0.0.1:${server.address.port}`);
    const [code, reason] = await once(ws, 'close');
    assert.equal(code, 1008);
    assert.equal(reason.toString(), 'no hello');
    assert.ok(lines.some((l) => /sent no hello within 20 ms/.test(l)));
  } finally {
    await server.close();
  }
});

test('requests go only to computers that completed hello', () =>
  withBridge({}, async (bridge) => {
    const silent = new WebSocket(bridge.linkUrl);
    const frames = [];
    silent.on('message', (d) => frames.push(d.toString()));
    await once(silent, 'open');
    const computer = await linkComputer(bridge, { computerId: 1 });
    const result = await callTool(bridge, 'probe-computers');
    assert.equal(result.content[0].text, pongText(1, null));
    assert.deepEqual(frames, []);
    silent.close();
    await computer.close();
  }));

test('replacement: the old socket is closed with a 4000-range code and its in-flight request ends at once', () =>
  withBridge({ CC_PROBE_TIMEOUT_MS: '60000' }, async (bridge) => {
    const old = await linkComputer(bridge, { computerId: 9, computerLabel: 'old', onRequest: () => null });
    const probe = callTool(bridge, 'probe-computers');
    await old.next((f) => f.type === 'request');
    const fresh = await linkComputer(bridge, { computerId: 9, computerLabel: 'new' });
    const closed = await old.closed;
    assert.ok(closed.code >= 4000 && closed.code < 5000, `code ${closed.code}`);
    assert.match(closed.reason, /replaced/);
    const result = await probe;
    assert.equal(result.content[0].text, 'disconnected from 9 (Label: old)');
    assert.equal(bridge.links.get(9).label, 'new');
    assert.equal((await callTool(bridge, 'probe-computers')).content[0].text, pongText(9, 'new'));
    assert.ok(bridge.logs.some((l) => /info replaced 9 \(Label: old\)/.test(l)));
    await fresh.close();
  }));

test('malformed JSON and binary frames are dropped without disturbing the link', () =>
  withBridge({}, async (bridge) => {
    const computer = await linkComputer(bridge, { computerId: 2 });
    computer.send('{this is not json');
    computer.ws.send(Buffer.from([1, 2, 3]), { binary: true });
    computer.send({ type: 'mystery' });
    computer.send({ type: 'response', id: 42, ok: true });
    const result = await callTool(bridge, 'probe-computers');
    assert.equal(result.content[0].text, pongText(2, null));
    assert.ok(bridge.logs.some((l) => /binary frame dropped/.test(l)));
    assert.ok(bridge.logs.some((l) => /frame is not valid JSON; frame dropped/.test(l)));
    assert.ok(bridge.logs.some((l) => /unknown frame type \(a string other than "hello", "response" or "info"\)/.test(l)));
    assert.equal(bridge.links.size, 1);
    await computer.close();
  }));

/** Opens a raw socket, sends `frames` at once, and collects what comes back until the close. */
async function firstFrames(bridge, frames) {
  const ws = new WebSocket(bridge.linkUrl);
  const received = [];
  ws.on('message', (d) => {
    received.push(JSON.parse(d.toString()));
    // linked after all: end it here so the test fails on what it got instead of hanging
    if (received.at(-1).type === 'hello-ok') ws.close();
  });
  const closed = once(ws, 'close').then(([code, reason]) => ({ code, reason: reason.toString() }));
  await once(ws, 'open');
  for (const f of frames) ws.send(f.data ?? f, { binary: f.binary ?? false });
  return { received, ...(await closed) };
}

// Before: a first frame that was not JSON was logged and dropped, and the socket held its pre-hello
// slot (CC_MAX_PENDING_HELLOS) until the 10 s hello timeout closed it with 'no hello'.
test('bug: a pre-hello frame that is not valid JSON waited out the hello timeout; now hello-error and close 1008 at once', () =>
  withBridge({}, async (bridge) => {
    // the hello behind the bad frame changes nothing: the socket is refused already
    const { received, code, reason } = await firstFrames(bridge, ['nope{', JSON.stringify({ type: 'hello', computerId: 3 })]);
    assert.equal(code, 1008);
    assert.equal(reason, 'invalid hello: the first frame must be a hello; frame is not valid JSON');
    assert.deepEqual(received, [{ type: 'hello-error', error: 'the first frame must be a hello; frame is not valid JSON', code: 'invalid' }]);
    assert.equal(bridge.links.size, 0);
    assert.equal(bridge.logs.filter((l) => /warn link from 127\.0\.0\.1:\d+ refused before hello: the first frame must be a hello; frame is not valid JSON; closing \(1008\)/.test(l)).length, 1);
    assert.ok(!bridge.logs.some((l) => /sent no hello/.test(l)));
    const metrics = await (await fetch(bridge.mcpUrl.replace(/\/mcp$/, '/metrics'))).text();
    assert.match(metrics, /cc_links_refused_total\{reason="invalid"\} 1\b/);
    assert.match(metrics, /cc_link_connections_pre_hello 0\b/);
  }));

test('bug: a pre-hello binary, non-object, untyped, unknown-type or too-deep frame waited out the hello timeout; each now closes 1008 with its reason', () =>
  withBridge({}, async (bridge) => {
    const cases = [
      [{ data: Buffer.from([1, 2, 3]), binary: true }, 'the first frame must be a hello (a JSON text frame); got a binary frame'],
      ['42', 'the first frame must be a hello; frame is not a JSON object (it is a number)'],
      ['{}', 'the first frame must be a hello; frame has no type ("hello", "response" or "info")'],
      ['{"type":"mystery"}', 'the first frame must be a hello; unknown frame type (a string other than "hello", "response" or "info")'],
      ['{"type":"info","computerLabel":5}', 'the first frame must be a hello; info.computerLabel must be a string or null'],
      ['['.repeat(70) + ']'.repeat(70), /^the first frame must be a hello; frame .*deep/],
    ];
    for (const [frame, error] of cases) {
      const { received, code, reason } = await firstFrames(bridge, [frame]);
      assert.equal(code, 1008, String(error));
      assert.equal(received.length, 1);
      assert.equal(received[0].type, 'hello-error');
      assert.equal(received[0].code, 'invalid');
      if (typeof error === 'string') assert.equal(received[0].error, error);
      else assert.match(received[0].error, error);
      assert.equal(reason, closeReason(`invalid hello: ${received[0].error}`));
      assert.ok(Buffer.byteLength(reason) <= 123);
    }
    assert.equal(bridge.links.size, 0);
    assert.ok(!bridge.logs.some((l) => /sent no hello/.test(l)));
  }));

test('a close reason longer than a close frame holds is cut to 123 bytes with "..."', () => {
  assert.equal(closeReason('short'), 'short');
  assert.equal(closeReason('x'.repeat(200)), `${'x'.repeat(120)}...`);
  const wide = closeReason('é'.repeat(100));
  assert.ok(Buffer.byteLength(wide) <= 123, String(Buffer.byteLength(wide)));
  assert.ok(wide.endsWith('...'));
  assert.equal(closeReason('y'.repeat(123)), 'y'.repeat(123));
  // one byte over is cut (a 124-byte reason is more than a close frame can carry)
  assert.equal(closeReason('z'.repeat(124)), `${'z'.repeat(120)}...`);
});

test("hello-ok carries the bridge's frame limit (CC_MAX_FRAME_BYTES) for the computer to size its frames to", () =>
  withBridge({ CC_MAX_FRAME_BYTES: '4096' }, async (bridge) => {
    const computer = new FakeComputer(bridge.linkUrl);
    assert.deepEqual(await computer.link({ type: 'hello', computerId: 8, maxFrame: 131072 }), { type: 'hello-ok', maxFrame: 4096, maxIdentity: 32768 });
    await computer.close();
  }));

test('a second hello on a linked socket is ignored', () =>
  withBridge({}, async (bridge) => {
    const computer = await linkComputer(bridge, { computerId: 5, computerLabel: 'a' });
    computer.send({ type: 'hello', computerId: 6, computerLabel: 'b' });
    await until(() => bridge.logs.some((l) => /sent a second hello; ignored/.test(l)));
    assert.deepEqual(bridge.links.list().map((l) => l.computerId), [5]);
    await computer.close();
  }));

test('a frame over CC_MAX_FRAME_BYTES closes that socket with 1009, and only that one', () =>
  withBridge({ CC_MAX_FRAME_BYTES: '2048' }, async (bridge) => {
    const big = await linkComputer(bridge, { computerId: 1 });
    const other = await linkComputer(bridge, { computerId: 2 });
    big.send({ type: 'response', id: 'x', ok: true, result: 'y'.repeat(4096) });
    assert.equal((await big.closed).code, 1009);
    await until(() => bridge.links.size === 1);
    assert.equal((await callTool(bridge, 'probe-computers')).content[0].text, pongText(2, null));
    await other.close();
  }));

test('a spoofed response from another computer is ignored; the real answer still counts', () =>
  withBridge({ CC_PROBE_TIMEOUT_MS: '60000' }, async (bridge) => {
    let release;
    const gate = new Promise((r) => (release = r));
    const victim = await linkComputer(bridge, {
      computerId: 1,
      computerLabel: 'victim',
      onRequest: async () => {
        await gate;
        return { ok: true, result: pongText(1, 'victim') };
      },
    });
    const attacker = await linkComputer(bridge, { computerId: 2, computerLabel: 'attacker' });
    const probe = callTool(bridge, 'probe-computers');
    const request = await victim.next((f) => f.type === 'request');
    // the attacker learned the id somehow and answers it on its own link
    attacker.send({ type: 'response', id: request.id, ok: true, result: 'pong from 1 (Label: forged)' });
    await until(() => bridge.logs.some((l) => /matches no request in flight on this link/.test(l)));
    release();
    const result = await probe;
    assert.equal(result.content[0].text, `${pongText(1, 'victim')}\n${pongText(2, 'attacker')}`);
    await victim.close();
    await attacker.close();
  }));

test('heartbeat: a link that misses a pong is terminated and unregistered', () =>
  withBridge({ CC_HEARTBEAT_MS: '30' }, async (bridge) => {
    // autoPong off makes this client ignore the bridge's pings
    const ws = new WebSocket(bridge.linkUrl, { autoPong: false });
    await once(ws, 'open');
    ws.send(JSON.stringify({ type: 'hello', computerId: 8 }));
    await until(() => bridge.links.size === 1);
    const [code] = await once(ws, 'close');
    assert.equal(code, 1006);
    await until(() => bridge.links.size === 0);
    assert.ok(bridge.logs.some((l) => /missed a heartbeat; terminating/.test(l)));
  }));

test('heartbeat: a link that answers pings stays and its lastSeenAt moves', () =>
  withBridge({ CC_HEARTBEAT_MS: '20' }, async (bridge) => {
    const computer = await linkComputer(bridge, { computerId: 3 });
    const first = bridge.links.get(3).lastSeenAt;
    await until(() => bridge.links.get(3).lastSeenAt > first);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(bridge.links.size, 1);
    await computer.close();
  }));

test('GET /mcp-computer.lua serves the program; other plain HTTP paths get 404', () =>
  withBridge({}, async (bridge) => {
    const base = bridge.linkUrl.replace(/^ws/, 'http');
    const res = await fetch(`${base}/mcp-computer.lua`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /text\/x-lua/);
    assert.equal(await res.text(), await readFile(LUA_PROGRAM_PATH, 'utf8'));
    const other = await fetch(`${base}/elsewhere`);
    assert.equal(other.status, 404);
    assert.match(await other.text(), /GET \/mcp-computer\.lua/);
    // only GET serves it; its query is not part of the path
    assert.equal((await fetch(`${base}/mcp-computer.lua`, { method: 'POST', body: 'x' })).status, 404);
    assert.equal((await fetch(`${base}/mcp-computer.lua?v=2`)).status, 200);
  }));

test('GET /mcp-computer.lua answers 500 when the program file is missing', async () => {
  const lines = [];
  const server = await startLinkServer(new LinkRegistry(), createLogger('error', (l) => lines.push(l)), {
    host: '127.0.0.1',
    port: 0,
    heartbeatMs: 60_000,
    maxFrameBytes: 1 << 20,
    luaProgramPath: '/nonexistent/mcp-computer.lua',
  });
  try {
    const res = await fetch(`http://127.0.0.1:${server.address.port}/mcp-computer.lua`);
    assert.equal(res.status, 500);
    assert.match(await res.text(), /missing/);
    assert.ok(lines.some((l) => /cannot read \/nonexistent/.test(l)));
  } finally {
    await server.close();
  }
});

test('close(): links get 1001 and their in-flight requests end at once', () =>
  withBridge({ CC_PROBE_TIMEOUT_MS: '60000' }, async (bridge) => {
    const computer = await linkComputer(bridge, { computerId: 1, onRequest: () => null });
    const probe = callTool(bridge, 'probe-computers');
    await computer.next((f) => f.type === 'request');
    const closing = bridge.close();
    const result = await probe;
    assert.equal(result.content[0].text, 'disconnected from 1 (Label: null)');
    assert.equal((await computer.closed).code, 1001);
    await closing;
  }));

test('a listener whose port is taken fails to start with EADDRINUSE', async () => {
  const first = await startLinkServer(new LinkRegistry(), createLogger('silent'), {
    host: '127.0.0.1',
    port: 0,
    heartbeatMs: 60_000,
    maxFrameBytes: 1 << 20,
    luaProgramPath: LUA_PROGRAM_PATH,
  });
  try {
    await assert.rejects(
      startLinkServer(new LinkRegistry(), createLogger('silent'), {
        host: '127.0.0.1',
        port: first.address.port,
        heartbeatMs: 60_000,
        maxFrameBytes: 1 << 20,
        luaProgramPath: LUA_PROGRAM_PATH,
      }),
      { code: 'EADDRINUSE' },
    );
  } finally {
    await first.close();
  }
});

test('frames sent to one computer in the same turn (one corked write) arrive whole, in order, and are all answered', () =>
  withBridge({}, async (bridge) => {
    const computer = await linkComputer(bridge, { computerId: 7 });
    const other = await linkComputer(bridge, { computerId: 8 });
    const link = bridge.links.get(7);
    // all in one synchronous turn
    const outcomes = Array.from({ length: 50 }, (_, i) => bridge.links.request(link, 'ping', { n: i }, { timeoutMs: 30_000 }));
    const both = bridge.links.requestAll(bridge.links.list(), 'ping', undefined, { timeoutMs: 30_000 });
    assert.deepEqual((await Promise.all(outcomes)).map((o) => o.status), Array(50).fill('ok'));
    assert.deepEqual((await both).map((o) => o.result), [pongText(7, null), pongText(8, null)]);
    const requests = computer.received.filter((f) => f.type === 'request');
    assert.deepEqual(requests.slice(0, 50).map((f) => f.params.n), Array.from({ length: 50 }, (_, i) => i));
    assert.equal(requests.length, 51);
    assert.equal(other.received.filter((f) => f.type === 'request').length, 1);
    await computer.close();
    await other.close();
  }));

test("a peer's pings get pongs with their payload (pre-hello and linked), and the link still works", () =>
  withBridge({}, async (bridge) => {
    const ws = new WebSocket(bridge.linkUrl);
    await once(ws, 'open');
    const pongs = [];
    ws.on('pong', (data) => pongs.push(data.toString()));
    ws.ping('before hello');
    await until(() => pongs.length === 1);
    ws.send(JSON.stringify({ type: 'hello', computerId: 4 }));
    await until(() => bridge.links.size === 1);
    for (let i = 0; i < 5; i++) ws.ping(`p${i}`);
    await until(() => pongs.length === 6);
    assert.deepEqual(pongs, ['before hello', 'p0', 'p1', 'p2', 'p3', 'p4']);
    ws.close();
    await once(ws, 'close');
  }));

test('a peer whose pings outrun the writing of their pongs is cut at 60 unwritten, as ws does; other links stay', () =>
  withBridge({}, async (bridge) => {
    const quiet = await linkComputer(bridge, { computerId: 1 });
    const ws = new WebSocket(bridge.linkUrl);
    await once(ws, 'open');
    ws.send(JSON.stringify({ type: 'hello', computerId: 2 }));
    await until(() => bridge.links.size === 2);
    // not reading either: whatever the bridge cannot write out waits in it
    ws._socket.pause();
    const payload = 'x'.repeat(125);
    for (let round = 0; round < 100 && bridge.links.size === 2 && ws.readyState === WebSocket.OPEN; round++) {
      for (let i = 0; i < 500; i++) ws.ping(payload);
      await new Promise((r) => setTimeout(r, 5));
    }
    await until(() => bridge.links.size === 1);
    assert.ok(bridge.links.get(1), 'the other link is untouched');
    assert.equal(bridge.links.get(2), undefined);
    ws.terminate();
    await quiet.close();
  }));
