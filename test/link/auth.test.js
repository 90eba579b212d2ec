// CC_LINK_TOKEN and the link limits against a real bridge; fake computers are real ws clients.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import WebSocket from 'ws';
import { FakeComputer, callTool, linkComputer, rpc, withBridge, until } from '../helpers.js';

const TOKEN = 'link-token-0123456789abcdef';
const hello = (computerId, token) => ({ type: 'hello', computerId, ...(token === undefined ? {} : { token }) });

test('CC_LINK_TOKEN: the right token links; a wrong or missing one gets hello-error unauthorized and close 4401', () =>
  withBridge({ CC_LINK_TOKEN: `${TOKEN},${TOKEN}-next` }, async (bridge) => {
    const good = new FakeComputer(bridge.linkUrl, { computerId: 1 });
    assert.equal((await good.link(hello(1, TOKEN))).type, 'hello-ok');
    const next = new FakeComputer(bridge.linkUrl, { computerId: 2 });
    assert.equal((await next.link(hello(2, `${TOKEN}-next`))).type, 'hello-ok', 'rotation token');
    for (const token of [undefined, 'wrong-token-0123456789abcdef', TOKEN.slice(1), 42]) {
      const bad = new FakeComputer(bridge.linkUrl, { computerId: 3 });
      const first = await bad.link(hello(3, token));
      assert.equal(first.type, 'hello-error');
      assert.equal(first.code, 'unauthorized');
      assert.match(first.error, /refused the token.*set mcp\.token/);
      assert.equal((await bad.closed).code, 4401);
    }
    assert.deepEqual(bridge.links.list().map((l) => l.computerId), [1, 2]);
    const refusals = bridge.logs.filter((l) => /refused: (no|wrong) link token/.test(l));
    assert.equal(refusals.length, 4);
    for (const line of refusals) {
      assert.match(line, /link from 127\.0\.0\.1:\d+ \(computer 3\)/);
      assert.ok(!line.includes('wrong-token') && !line.includes(TOKEN.slice(1)), 'never the token');
    }
    assert.ok(!bridge.logs.some((l) => l.includes(TOKEN)), 'the token is never logged');
    assert.equal(bridge.metrics.linksRefused.get('unauthorized'), 4);
    await good.close();
    await next.close();
  }));

test('a refused link never replaces the real computer and never gets a request', () =>
  withBridge({ CC_LINK_TOKEN: TOKEN }, async (bridge) => {
    const real = new FakeComputer(bridge.linkUrl, { computerId: 9, onRequest: () => ({ ok: true, result: { ok: true, output: 'real\n', returns: [] } }) });
    assert.equal((await real.link(hello(9, TOKEN))).type, 'hello-ok');
    const impostors = await Promise.all(
      Array.from({ length: 5 }, async () => {
        const impostor = new FakeComputer(bridge.linkUrl, { computerId: 9, onRequest: () => ({ ok: true, result: { ok: true, output: 'stolen\n', returns: [] } }) });
        await impostor.link(hello(9, 'guess-guess-guess-guess'));
        return impostor;
      }),
    );
    const result = await callTool(bridge, 'exec-lua', { computerId: 9, code: 'return 1' });
    assert.notEqual(result.isError, true, JSON.stringify(result));
    assert.equal(result.structuredContent.output, 'real\n');
    for (const impostor of impostors) {
      await impostor.closed;
      assert.deepEqual(impostor.received.map((f) => f.type), ['hello-error']);
    }
    assert.equal(real.received.filter((f) => f.type === 'request').length, 1);
    await real.close();
  }));

test('CC_MAX_LINKS holds under concurrent hellos; replacing an existing id is still allowed at the cap', () =>
  withBridge({ CC_MAX_LINKS: '3' }, async (bridge) => {
    const computers = Array.from({ length: 12 }, (_, i) => new FakeComputer(bridge.linkUrl, { computerId: 100 + i }));
    const answers = await Promise.all(computers.map((c) => c.link()));
    const ok = answers.filter((a) => a.type === 'hello-ok').length;
    assert.equal(ok, 3);
    for (const a of answers.filter((x) => x.type === 'hello-error')) {
      assert.equal(a.code, 'busy');
      assert.match(a.error, /already has 3 links \(CC_MAX_LINKS\)/);
    }
    const refused = computers.filter((_, i) => answers[i].type === 'hello-error');
    for (const c of refused) assert.equal((await c.closed).code, 1013);
    assert.equal(bridge.links.size, 3);
    const linkedId = bridge.links.list()[0].computerId;
    const replacement = new FakeComputer(bridge.linkUrl, { computerId: linkedId });
    assert.equal((await replacement.link()).type, 'hello-ok');
    assert.equal(bridge.links.size, 3);
    assert.equal(bridge.metrics.linksReplaced, 1);
    assert.equal(bridge.metrics.linksRefused.get('links'), 9);
    await Promise.all(computers.concat(replacement).map((c) => c.close()));
  }));

test('CC_MAX_LINKS_PER_ADDRESS caps links from one address', () =>
  withBridge({ CC_MAX_LINKS_PER_ADDRESS: '2' }, async (bridge) => {
    const computers = Array.from({ length: 4 }, (_, i) => new FakeComputer(bridge.linkUrl, { computerId: i }));
    const answers = await Promise.all(computers.map((c) => c.link()));
    assert.equal(answers.filter((a) => a.type === 'hello-ok').length, 2);
    assert.match(answers.find((a) => a.type === 'hello-error').error, /127\.0\.0\.1 already has 2 links \(CC_MAX_LINKS_PER_ADDRESS\)/);
    // a freed slot can be taken again
    await computers[answers.findIndex((a) => a.type === 'hello-ok')].close();
    await until(() => bridge.links.size === 1);
    const again = new FakeComputer(bridge.linkUrl, { computerId: 50 });
    await until(async () => {
      const a = await again.link();
      if (a.type === 'hello-ok') return true;
      await again.closed;
      again.received = [];
      return false;
    });
    await Promise.all(computers.concat(again).map((c) => c.close()));
  }));

/** Opens a ws without saying hello; resolves 'open' or the HTTP status it was refused with. */
function openSilent(url) {
  const ws = new WebSocket(url);
  return new Promise((resolve) => {
    ws.once('open', () => resolve({ ws, status: 'open' }));
    ws.once('unexpected-response', (_req, res) => {
      resolve({ ws, status: res.statusCode, retryAfter: res.headers['retry-after'] });
      res.resume();
    });
    ws.once('error', () => {});
  });
}

test('CC_MAX_PENDING_HELLOS (and per address): more silent sockets get HTTP 503 with Retry-After before the handshake', async () => {
  for (const env of [{ CC_MAX_PENDING_HELLOS: '3' }, { CC_MAX_PENDING_HELLOS_PER_ADDRESS: '3' }]) {
    await withBridge(env, async (bridge) => {
      const sockets = await Promise.all(Array.from({ length: 8 }, () => openSilent(bridge.linkUrl)));
      assert.equal(sockets.filter((s) => s.status === 'open').length, 3);
      for (const s of sockets.filter((x) => x.status !== 'open')) {
        assert.equal(s.status, 503);
        assert.equal(s.retryAfter, '1');
      }
      // a socket that says hello frees its place
      const opened = sockets.filter((s) => s.status === 'open');
      opened[0].ws.send(JSON.stringify(hello(1)));
      await until(() => bridge.links.size === 1);
      const late = await openSilent(bridge.linkUrl);
      assert.equal(late.status, 'open');
      const reason = Object.keys(env)[0] === 'CC_MAX_PENDING_HELLOS' ? 'pending' : 'pending_per_address';
      assert.equal(bridge.metrics.linksRefused.get(reason), 5);
      for (const s of [...sockets, late]) s.ws.terminate();
    });
  }
});

test('CC_HELLO_RATE throttles a hello flood from one address with hello-error busy', () =>
  withBridge({ CC_HELLO_RATE: '1' }, async (bridge) => {
    const computers = Array.from({ length: 8 }, (_, i) => new FakeComputer(bridge.linkUrl, { computerId: i }));
    const answers = await Promise.all(computers.map((c) => c.link()));
    const throttled = answers.filter((a) => a.type === 'hello-error');
    // a burst of 2 passes; the clock may refill one or two more on a slow machine, never all 8
    assert.ok(throttled.length >= 4, JSON.stringify(answers));
    for (const a of throttled) {
      assert.equal(a.code, 'busy');
      assert.match(a.error, /too many hellos from 127\.0\.0\.1 \(CC_HELLO_RATE=1\/s\)/);
    }
    assert.equal(bridge.metrics.linksRefused.get('hello_rate'), throttled.length);
    await Promise.all(computers.map((c) => c.close()));
  }));

test('CC_MAX_REQUESTS_PER_COMPUTER: one busy computer fails fast; another computer is untouched', () =>
  withBridge({ CC_MAX_REQUESTS_PER_COMPUTER: '2' }, async (bridge) => {
    const silent = await linkComputer(bridge, { computerId: 1, onRequest: () => null });
    const other = await linkComputer(bridge, { computerId: 2, onRequest: () => ({ ok: true, result: { ok: true, output: '', returns: [] } }) });
    const hanging = [1, 2].map(() => callTool(bridge, 'exec-lua', { computerId: 1, code: 'sleep(99)', timeoutMs: 60_000 }));
    await until(() => bridge.links.get(1).pendingCount === 2);
    const refused = await callTool(bridge, 'exec-lua', { computerId: 1, code: 'return 1' });
    assert.equal(refused.isError, true);
    assert.match(refused.content[0].text, /computer 1 already has 2 requests in flight \(CC_MAX_REQUESTS_PER_COMPUTER\)/);
    const fine = await callTool(bridge, 'exec-lua', { computerId: 2, code: 'return 1' });
    assert.notEqual(fine.isError, true, JSON.stringify(fine));
    assert.equal(silent.received.filter((f) => f.type === 'request').length, 2, 'the refused call was never sent');
    await silent.close();
    await Promise.all(hanging);
    await other.close();
  }));

test('MCP_MAX_CONCURRENT_CALLS: the next call gets 503 with Retry-After; other methods and batches are unaffected', () =>
  withBridge({ MCP_MAX_CONCURRENT_CALLS: '2' }, async (bridge) => {
    const silent = await linkComputer(bridge, { computerId: 1, onRequest: () => null });
    const hanging = [1, 2].map(() => callTool(bridge, 'exec-lua', { computerId: 1, code: 'sleep(99)', timeoutMs: 60_000 }));
    await until(() => bridge.metrics.callsInFlight === 2);
    const call = { jsonrpc: '2.0', id: 77, method: 'tools/call', params: { name: 'probe-computers', arguments: {} } };
    const busy = await rpc(bridge.mcpUrl, call);
    assert.equal(busy.status, 503);
    assert.equal(busy.headers.get('retry-after'), '1');
    assert.equal(busy.json.id, 77);
    assert.equal(busy.json.error.code, -32003);
    assert.match(busy.json.error.message, /busy: 2 tool calls are running \(MCP_MAX_CONCURRENT_CALLS\)/);
    const ping = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 78, method: 'ping' });
    assert.equal(ping.status, 200);
    const batch = await rpc(bridge.mcpUrl, [call, { jsonrpc: '2.0', id: 79, method: 'ping' }], { 'mcp-protocol-version': '2025-03-26' });
    assert.equal(batch.status, 200);
    assert.equal(batch.json.find((r) => r.id === 77).error.code, -32003);
    assert.deepEqual(batch.json.find((r) => r.id === 79).result, {});
    const rest = await fetch(`${new URL(bridge.mcpUrl).origin}/tools/probe-computers`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(rest.status, 503);
    assert.equal(rest.headers.get('retry-after'), '1');
    assert.equal((await rest.json()).error.code, 'busy');
    assert.equal(bridge.metrics.callCount('probe-computers', 'busy'), 3);
    await silent.close();
    await Promise.all(hanging);
    await until(() => bridge.metrics.callsInFlight === 0);
  }));

test('pre-hello tickets are returned when sockets close at any stage', () =>
  withBridge({ CC_MAX_PENDING_HELLOS: '2' }, async (bridge) => {
    for (let round = 0; round < 5; round++) {
      const a = await openSilent(bridge.linkUrl);
      const b = await openSilent(bridge.linkUrl);
      assert.equal(a.status, 'open');
      assert.equal(b.status, 'open');
      a.ws.terminate();
      b.ws.send('not json');
      await once(b.ws, 'close');
      await until(() => bridge.metrics.render().includes('cc_link_connections_pre_hello 0'));
    }
  }));
