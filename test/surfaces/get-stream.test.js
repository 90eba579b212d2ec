// GET /mcp, the 2025 revisions' server-to-client event stream, over real HTTP: list_changed on real
// tool set changes (config reload, an upstream server coming up, re-listing, going away), the
// refusals the spec and the listener's guards call for, the stream limit, keep-alive comments, a
// closed client dropping its stream, shutdown ending it, and one notice per session.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { connect } from 'node:net';
import { writeConfig } from '../config/write.js';
import { fixtureServer } from '../upstream/fixture.js';
import { callTool, rpc, startTestBridge, until, withBridge } from '../helpers.js';

const LIST_CHANGED = { jsonrpc: '2.0', method: 'notifications/tools/list_changed' };
const TOKEN = 'getstream-token-0123456789abcdef';
const luaTool = (name) => ({ name, target: { computerId: 1 }, lua: 'return 1' });

/** initialize (the revision asked for) + notifications/initialized; the session's headers and the result. */
async function initialize(url, version = '2025-11-25', extra = {}) {
  const init = await rpc(url, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 't', version: '0' } } }, extra);
  assert.equal(init.status, 200, init.text);
  const headers = { ...extra, 'mcp-protocol-version': version, 'mcp-session-id': init.headers.get('mcp-session-id') };
  assert.equal((await rpc(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers)).status, 202);
  return { headers, result: init.json.result };
}

/**
 * Opens GET `url` with node:http (fetch would buffer nothing we could watch line by line); resolves
 * once the head arrived. `events` gathers each SSE event's parsed data, `comments` the comment lines.
 */
function openStream(url, headers = {}, method = 'GET') {
  return new Promise((resolve, reject) => {
    const all = Object.fromEntries(Object.entries({ accept: 'text/event-stream', ...headers }).filter(([, v]) => v !== undefined));
    const req = request(url, { method, headers: all });
    req.on('error', reject);
    req.on('response', (res) => {
      const stream = { status: res.statusCode, headers: res.headers, events: [], comments: [], body: '', ended: false, res, req };
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        stream.body += chunk;
        buffer += chunk;
        let cut;
        while ((cut = buffer.indexOf('\n\n')) !== -1) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const data = block.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6));
          if (data.length) stream.events.push(JSON.parse(data.join('\n')));
          for (const line of block.split('\n')) if (line.startsWith(':')) stream.comments.push(line);
        }
      });
      res.on('end', () => (stream.ended = true));
      res.on('error', () => {});
      stream.close = () => req.destroy();
      stream.json = () => JSON.parse(stream.body);
      if (res.statusCode !== 200) res.on('end', () => resolve(stream));
      else resolve(stream);
    });
    req.end();
  });
}

const streamCount = async (bridge, headers = {}) => Number(/^cc_mcp_get_streams (\d+)$/m.exec(await (await fetch(new URL('/metrics', bridge.mcpUrl), { headers })).text())[1]);
const reload = async (bridge, headers = {}) => (await fetch(new URL('/reload', bridge.mcpUrl), { method: 'POST', headers })).status;
const listNames = async (bridge, headers) => (await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 9, method: 'tools/list' }, headers)).json.result.tools.map((t) => t.name);
const settle = () => new Promise((r) => setTimeout(r, 50));

test('initialize over HTTP declares tools.listChanged for each 2025 revision; with MCP_MAX_GET_STREAMS=0 it does not and GET stays 405', async () => {
  await withBridge({}, async (bridge) => {
    for (const version of ['2025-11-25', '2025-06-18', '2025-03-26']) {
      const { result } = await initialize(bridge.mcpUrl, version);
      assert.equal(result.protocolVersion, version);
      assert.deepEqual(result.capabilities, { tools: { listChanged: true } });
    }
  });
  await withBridge({ MCP_MAX_GET_STREAMS: '0' }, async (bridge) => {
    const { headers, result } = await initialize(bridge.mcpUrl);
    assert.deepEqual(result.capabilities, { tools: {} });
    for (const method of ['GET', 'DELETE']) {
      const res = await openStream(bridge.mcpUrl, headers, method);
      assert.equal(res.status, 405);
      assert.equal(res.headers.allow, 'POST');
      assert.match(res.json().error.message, /over POST only \(no GET event stream: MCP_MAX_GET_STREAMS is 0\)/);
    }
  });
});

test('a config reload that changes the tool set sends notifications/tools/list_changed on the GET stream, once per change; an unchanged reload sends none', async () => {
  const file = writeConfig({ tools: [luaTool('one')] });
  await withBridge({ CC_CONFIG: file }, async (bridge) => {
    for (const version of ['2025-11-25', '2025-06-18', '2025-03-26']) {
      const { headers } = await initialize(bridge.mcpUrl, version);
      const stream = await openStream(bridge.mcpUrl, version === '2025-03-26' ? { 'mcp-session-id': headers['mcp-session-id'] } : headers);
      assert.equal(stream.status, 200);
      assert.equal(stream.headers['content-type'], 'text/event-stream');
      assert.equal(stream.headers['cache-control'], 'no-cache');
      writeConfig({ tools: [luaTool('one'), luaTool(`two-${version}`)] }, file);
      assert.equal(await reload(bridge), 200);
      await until(() => stream.events.length === 1);
      assert.deepEqual(stream.events, [LIST_CHANGED]);
      assert.ok((await listNames(bridge, headers)).includes(`two-${version}`));
      assert.equal(await reload(bridge), 200); // same file: nothing changed
      await settle();
      assert.equal(stream.events.length, 1);
      stream.close();
      await until(async () => (await streamCount(bridge)) === 0);
    }
  });
});

test('an upstream server coming up, re-listing and going away each send list_changed on the GET stream', async () => {
  const file = writeConfig({ servers: [] });
  await withBridge({ CC_CONFIG: file }, async (bridge) => {
    const { headers } = await initialize(bridge.mcpUrl);
    const stream = await openStream(bridge.mcpUrl, headers);
    assert.equal(stream.status, 200);
    writeConfig({ servers: [fixtureServer('fx')] }, file);
    assert.equal(await reload(bridge), 200);
    await until(async () => (await listNames(bridge, headers)).includes('fx__echo'));
    await until(() => stream.events.length >= 1);
    const up = stream.events.length;
    // fx__change makes the fixture send its own list_changed and list one more tool
    assert.equal((await callTool(bridge, 'fx__change')).content[0].text, 'changed');
    await until(async () => (await listNames(bridge, headers)).includes('fx__added'));
    await until(() => stream.events.length > up);
    const relisted = stream.events.length;
    writeConfig({ servers: [] }, file);
    assert.equal(await reload(bridge), 200);
    await until(async () => !(await listNames(bridge, headers)).includes('fx__echo'));
    await until(() => stream.events.length > relisted);
    assert.ok(stream.events.every((e) => JSON.stringify(e) === JSON.stringify(LIST_CHANGED)), JSON.stringify(stream.events));
    stream.close();
  });
});

test('refusals: no or wrong Accept 406, 2026-07-28 405 as before, an unserved revision 400, no session 400, a session this process did not issue 404, other methods 405', async () => {
  await withBridge({}, async (bridge) => {
    const { headers } = await initialize(bridge.mcpUrl);
    const session = headers['mcp-session-id'];
    for (const accept of [undefined, 'application/json', '*/*', 'text/event-stream;q=0']) {
      const res = await openStream(bridge.mcpUrl, { ...headers, accept });
      assert.equal(res.status, 406, String(accept));
      assert.match(res.json().error.message, /^Not Acceptable: GET \/mcp opens the server's event stream; its Accept header must list text\/event-stream/);
    }
    const modern = await openStream(bridge.mcpUrl, { ...headers, 'mcp-protocol-version': '2026-07-28' });
    assert.equal(modern.status, 405);
    assert.equal(modern.headers.allow, 'POST');
    assert.match(modern.json().error.message, /2026-07-28 has no GET stream/);
    const unserved = await openStream(bridge.mcpUrl, { ...headers, 'mcp-protocol-version': '2024-11-05' });
    assert.equal(unserved.status, 400);
    assert.equal(unserved.json().error.code, -32022);
    const none = await openStream(bridge.mcpUrl, { 'mcp-protocol-version': '2025-11-25' });
    assert.equal(none.status, 400);
    assert.match(none.json().error.message, /needs the Mcp-Session-Id header/);
    const blank = await openStream(bridge.mcpUrl, { 'mcp-protocol-version': '2025-11-25', 'mcp-session-id': ' ' });
    assert.equal(blank.status, 400);
    // a forged id, a made-up one, an altered one (as one from before a restart: another key signed it)
    for (const id of [`${'0'.repeat(32)}.${'0'.repeat(32)}`, 'made-up', session.slice(0, -1) + (session.endsWith('0') ? '1' : '0')]) {
      const stale = await openStream(bridge.mcpUrl, { ...headers, 'mcp-session-id': id });
      assert.equal(stale.status, 404, id);
      assert.deepEqual(stale.json().error, { code: -32001, message: (await import('../../dist/surfaces/mcp-route.js')).SESSION_NOT_FOUND_MESSAGE });
    }
    for (const method of ['DELETE', 'PUT', 'HEAD']) {
      const res = await fetch(bridge.mcpUrl, { method, headers: { ...headers, accept: 'text/event-stream' } });
      assert.equal(res.status, 405, method);
      assert.equal(res.headers.get('allow'), 'GET, POST');
    }
    assert.equal(await streamCount(bridge), 0);
    // and the session still opens its stream
    const ok = await openStream(bridge.mcpUrl, headers);
    assert.equal(ok.status, 200);
    ok.close();
  });
});

test('GET /mcp has the guards POST has: the token, Origin and Host', async () => {
  await withBridge({ MCP_AUTH_TOKEN: TOKEN }, async (bridge) => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    const { headers } = await initialize(bridge.mcpUrl, '2025-11-25', auth);
    const { authorization: _, ...noToken } = headers;
    const missing = await openStream(bridge.mcpUrl, noToken);
    assert.equal(missing.status, 401);
    assert.equal(missing.json().error.code, -32001);
    assert.match(missing.headers['www-authenticate'], /^Bearer realm="cc-mcp-bridge"$/);
    const wrong = await openStream(bridge.mcpUrl, { ...noToken, authorization: 'Bearer not-the-token-at-all-000' });
    assert.equal(wrong.status, 401);
    assert.match(wrong.headers['www-authenticate'], /invalid_token/);
    const evil = await openStream(bridge.mcpUrl, { ...headers, origin: 'https://evil.example' });
    assert.equal(evil.status, 403);
    assert.match(evil.json().error.message, /Origin "https:\/\/evil\.example" is not allowed/);
    const rebound = await openStream(bridge.mcpUrl, { ...headers, host: 'attacker.example:3000' });
    assert.equal(rebound.status, 403);
    assert.match(rebound.json().error.message, /Host header must name a loopback address/);
    assert.equal(await streamCount(bridge, auth), 0);
    const ok = await openStream(bridge.mcpUrl, { ...headers, origin: 'http://localhost:5173' });
    assert.equal(ok.status, 200);
    assert.equal(ok.headers['access-control-allow-origin'], 'http://localhost:5173');
    ok.close();
  });
});

test('MCP_MAX_GET_STREAMS: a new session gets 503 saying so when every open stream is the only one of its session; a closed stream frees its place', async () => {
  await withBridge({ MCP_MAX_GET_STREAMS: '2' }, async (bridge) => {
    const a = await initialize(bridge.mcpUrl);
    const b = await initialize(bridge.mcpUrl);
    const c = await initialize(bridge.mcpUrl);
    const first = await openStream(bridge.mcpUrl, a.headers);
    const second = await openStream(bridge.mcpUrl, b.headers);
    assert.deepEqual([first.status, second.status], [200, 200]);
    for (let i = 0; i < 3; i++) {
      const over = await openStream(bridge.mcpUrl, c.headers);
      assert.equal(over.status, 503);
      assert.equal(over.json().error.code, -32003);
      assert.match(over.json().error.message, /^Service Unavailable: 2 event streams are open, the most this bridge allows \(MCP_MAX_GET_STREAMS\), each the only one of its session; tool calls still work over POST$/);
    }
    assert.equal(bridge.logs.filter((l) => /GET \/mcp refused: 2 event streams are open/.test(l)).length, 1);
    // POST is unaffected
    assert.equal((await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, c.headers)).status, 200);
    first.close();
    await until(async () => (await streamCount(bridge)) === 1);
    const third = await openStream(bridge.mcpUrl, c.headers);
    assert.equal(third.status, 200);
    third.close();
    second.close();
    await until(async () => (await streamCount(bridge)) === 0);
    assert.equal(first.ended || second.ended, false, 'none was ended by the bridge');
  });
});

const replacedCount = async (bridge) => Number(/^cc_mcp_get_streams_replaced_total (\d+)$/m.exec(await (await fetch(new URL('/metrics', bridge.mcpUrl))).text())[1]);

test('MCP_MAX_GET_STREAMS_PER_SESSION: a session opening one more ends its own oldest (with a comment naming the variable), never refused; notices go to its newest; other sessions are untouched', async () => {
  const file = writeConfig({ tools: [luaTool('one')] });
  await withBridge({ CC_CONFIG: file, MCP_MAX_GET_STREAMS_PER_SESSION: '2', MCP_MAX_GET_STREAMS: '100' }, async (bridge) => {
    const a = await initialize(bridge.mcpUrl);
    const b = await initialize(bridge.mcpUrl);
    const other = await openStream(bridge.mcpUrl, b.headers);
    // a client reconnecting in a loop without closing its old streams: every GET is answered
    const mine = [];
    for (let i = 0; i < 6; i++) {
      const s = await openStream(bridge.mcpUrl, a.headers);
      assert.equal(s.status, 200, `stream ${i}`);
      mine.push(s);
    }
    await until(() => mine.slice(0, 4).every((s) => s.ended));
    for (const s of mine.slice(0, 4)) {
      assert.deepEqual(s.comments, [': ended: this session opened a newer GET /mcp stream and may hold 2 (MCP_MAX_GET_STREAMS_PER_SESSION); notices go to its newest stream']);
    }
    assert.equal(await streamCount(bridge), 3);
    assert.equal(await replacedCount(bridge), 4);
    writeConfig({ tools: [luaTool('one'), luaTool('two')] }, file);
    assert.equal(await reload(bridge), 200);
    await until(() => mine[5].events.length === 1 && other.events.length === 1);
    await settle();
    assert.deepEqual(mine.map((s) => s.events.length), [0, 0, 0, 0, 0, 1]);
    assert.equal(other.ended, false);
    // a client closing a stream the bridge already ended changes no count
    for (const s of mine) s.close();
    other.close();
    await until(async () => (await streamCount(bridge)) === 0);
    assert.equal(bridge.tools.watching, 0);
  });
});

test('MCP_MAX_GET_STREAMS full: a new session takes the oldest stream of the session holding the most (2 or more); a session at the limit replaces its own oldest; only a new session facing single streams is refused', async () => {
  await withBridge({ MCP_MAX_GET_STREAMS: '3' }, async (bridge) => {
    const [a, b, c, d] = await Promise.all([0, 1, 2, 3].map(() => initialize(bridge.mcpUrl)));
    const hog = [];
    for (let i = 0; i < 3; i++) hog.push(await openStream(bridge.mcpUrl, a.headers));
    assert.deepEqual(hog.map((s) => s.status), [200, 200, 200]);
    const fromB = await openStream(bridge.mcpUrl, b.headers);
    assert.equal(fromB.status, 200);
    await until(() => hog[0].ended);
    assert.deepEqual(hog[0].comments, [': ended: 3 event streams are open, the most this bridge allows (MCP_MAX_GET_STREAMS), and another session needed one; this session holds 3, notices go to its newest stream']);
    const fromC = await openStream(bridge.mcpUrl, c.headers);
    assert.equal(fromC.status, 200);
    await until(() => hog[1].ended);
    assert.equal(hog[2].ended, false);
    // a, b and c hold one each: d is refused, nobody is ended
    const fromD = await openStream(bridge.mcpUrl, d.headers);
    assert.equal(fromD.status, 503);
    assert.match(fromD.json().error.message, /MCP_MAX_GET_STREAMS\), each the only one of its session/);
    // a reconnecting (its old stream maybe dead): its own oldest gives way
    const again = await openStream(bridge.mcpUrl, a.headers);
    assert.equal(again.status, 200);
    await until(() => hog[2].ended);
    assert.match(hog[2].comments[0], /^: ended: 3 event streams are open.*\(MCP_MAX_GET_STREAMS\), and this session needed one; this session holds 1/);
    assert.deepEqual([fromB.ended, fromC.ended, again.ended], [false, false, false]);
    assert.equal(await streamCount(bridge), 3);
    assert.equal(await replacedCount(bridge), 3);
    for (const s of [...hog, fromB, fromC, again]) s.close();
    await until(async () => (await streamCount(bridge)) === 0);
  });
});

test('keep-alive comments arrive on an idle stream (MCP_LISTEN_KEEPALIVE_MS)', async () => {
  await withBridge({ MCP_LISTEN_KEEPALIVE_MS: '20' }, async (bridge) => {
    const { headers } = await initialize(bridge.mcpUrl);
    const stream = await openStream(bridge.mcpUrl, headers);
    await until(() => stream.comments.length >= 3);
    assert.ok(stream.comments.every((c) => c === ': keep-alive'), stream.comments.join('|'));
    assert.equal(stream.events.length, 0);
    stream.close();
  });
});

test('a client closing its stream drops it: 200 streams opened and closed leave none, and no tool set watcher', async () => {
  const file = writeConfig({ tools: [luaTool('one')] });
  await withBridge({ CC_CONFIG: file, MCP_MAX_GET_STREAMS_PER_SESSION: '50', MCP_MAX_GET_STREAMS_PER_CLIENT: '50' }, async (bridge) => {
    const listeners = () => bridge.tools.watching;
    const base = listeners();
    const { headers } = await initialize(bridge.mcpUrl);
    for (let round = 0; round < 4; round++) {
      const streams = await Promise.all(Array.from({ length: 50 }, () => openStream(bridge.mcpUrl, headers)));
      assert.ok(streams.every((s) => s.status === 200));
      assert.equal(await streamCount(bridge), 50);
      assert.equal(listeners(), base + 1); // one watcher for the session's streams
      for (const s of streams) s.close();
      await until(async () => (await streamCount(bridge)) === 0);
    }
    assert.equal(listeners(), base);
    // a change with nobody listening goes nowhere and breaks nothing
    writeConfig({ tools: [luaTool('one'), luaTool('two')] }, file);
    assert.equal(await reload(bridge), 200);
    const after = await openStream(bridge.mcpUrl, headers);
    assert.equal(after.status, 200);
    writeConfig({ tools: [luaTool('one')] }, file);
    assert.equal(await reload(bridge), 200);
    await until(() => after.events.length === 1);
    after.close();
  });
});

test('bridge shutdown ends open streams; close does not wait for them', async () => {
  const bridge = await startTestBridge();
  const { headers } = await initialize(bridge.mcpUrl);
  const streams = [await openStream(bridge.mcpUrl, headers), await openStream(bridge.mcpUrl, headers)];
  assert.ok(streams.every((s) => s.status === 200));
  // a grace far beyond the test timeout: close must not need it
  await bridge.close(10 * 60_000);
  await until(() => streams.every((s) => s.ended));
});

test('one notice per session: on the newest of its streams, never on two; the older one takes over when the newest closes; each session gets its own', async () => {
  const file = writeConfig({ tools: [luaTool('one')] });
  await withBridge({ CC_CONFIG: file }, async (bridge) => {
    const a = await initialize(bridge.mcpUrl);
    const b = await initialize(bridge.mcpUrl);
    const older = await openStream(bridge.mcpUrl, a.headers);
    const newer = await openStream(bridge.mcpUrl, a.headers);
    const other = await openStream(bridge.mcpUrl, b.headers);
    let n = 0;
    const change = async () => {
      writeConfig({ tools: [luaTool('one'), luaTool(`t${++n}`)] }, file);
      assert.equal(await reload(bridge), 200);
    };
    await change();
    await until(() => newer.events.length === 1 && other.events.length === 1);
    await settle();
    assert.equal(older.events.length, 0);
    assert.equal(newer.events.length, 1);
    newer.close();
    await until(async () => (await streamCount(bridge)) === 2);
    await change();
    await until(() => older.events.length === 1 && other.events.length === 2);
    await settle();
    assert.deepEqual([older.events.length, newer.events.length, other.events.length], [1, 1, 2]);
    older.close();
    other.close();
  });
});

test('bridge <- bridge over HTTP: the near bridge holds the far one\'s GET stream and learns of its tool changes from it', async () => {
  const farFile = writeConfig({ tools: [luaTool('one')] });
  const far = await startTestBridge({ CC_CONFIG: farFile });
  const near = await startTestBridge({ CC_CONFIG: writeConfig({ servers: [{ id: 'far', url: far.mcpUrl }] }) });
  try {
    const { headers } = await initialize(near.mcpUrl);
    const nearStream = await openStream(near.mcpUrl, headers);
    await until(async () => (await listNames(near, headers)).includes('far__one'));
    // the near bridge's upstream client opened the far bridge's GET stream after initialize
    await until(async () => (await streamCount(far)) === 1);
    const seen = nearStream.events.length;
    writeConfig({ tools: [luaTool('one'), luaTool('two')] }, farFile);
    assert.equal(await reload(far), 200);
    // no polling: only the far bridge's list_changed on that stream makes the near one list again
    await until(async () => (await listNames(near, headers)).includes('far__two'));
    await until(() => nearStream.events.length > seen);
    assert.deepEqual(nearStream.events.at(-1), LIST_CHANGED);
    nearStream.close();
  } finally {
    await near.close();
    await far.close();
  }
});

test('a client that never reads its GET stream is cut off once 64 KiB wait unsent behind the full socket buffers; another session\'s stream keeps every notice', async () => {
  await withBridge({}, async (bridge) => {
    const reader = await initialize(bridge.mcpUrl);
    const stalled = await initialize(bridge.mcpUrl);
    const live = await openStream(bridge.mcpUrl, reader.headers);
    const { port } = new URL(bridge.mcpUrl);
    const socket = connect(Number(port), '127.0.0.1');
    socket.pause(); // never reads
    socket.on('error', () => {});
    socket.write(`GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: ${stalled.headers['mcp-session-id']}\r\n\r\n`);
    await until(async () => (await streamCount(bridge)) === 2);
    const watching = bridge.tools.watching;
    // tool set changes, one burst per turn, until the stalled stream is cut off (a bound, not a timing)
    const source = (on) => ({ id: 'flip', tools: () => (on ? [{ name: 'flip', title: 'flip', description: 'flip', inputSchema: { type: 'object' } }] : []) });
    let n = 0;
    while ((await streamCount(bridge)) === 2) {
      assert.ok(n < 2_000_000, 'the stalled stream was never cut off');
      for (let i = 0; i < 100; i++) {
        bridge.tools.setSource(source(n++ % 2 === 0));
        await new Promise((r) => setImmediate(r));
        await new Promise((r) => setImmediate(r));
      }
    }
    assert.match(await (await fetch(new URL('/metrics', bridge.mcpUrl))).text(), /^cc_mcp_get_streams_cut_off_total 1$/m);
    assert.equal(bridge.tools.watching, watching - 1);
    // the reader got every burst's notice (it reads)
    await until(() => live.events.length >= n - 1);
    assert.ok(live.events.every((e) => e.method === LIST_CHANGED.method));
    live.close();
    socket.destroy();
    await until(async () => (await streamCount(bridge)) === 0);
  });
});
