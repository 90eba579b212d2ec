// Per-client limits of 2026-07-28 subscriptions/listen over real HTTP: with MCP_AUTH_TOKEN a client
// is its token, and one over MCP_MAX_SUBSCRIPTIONS_PER_CLIENT ends its own oldest (answered -32003
// naming the variable); at MCP_MAX_SUBSCRIPTIONS a newcomer takes the oldest of the client holding
// two more than it would, else is refused; without tokens a client is its remote address.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { until, withBridge } from '../helpers.js';
import { writeConfig } from '../config/write.js';
import { SUB, listen } from './listen-client.js';

const A = 'listen-limits-token-a-0123456789';
const B = 'listen-limits-token-b-0123456789';
const auth = (token) => ({ headers: { authorization: `Bearer ${token}` } });
const acked = (stream) => stream.events.some((e) => e.method === 'notifications/subscriptions/acknowledged');
const finalOf = (stream) => stream.events.find((e) => 'id' in e);
const tool = (name) => ({ name, target: { computerId: 1 }, lua: 'return 1' });

async function metric(bridge, name, token = A) {
  const text = await (await fetch(bridge.mcpUrl.replace(/\/mcp$/, '/metrics'), { headers: { authorization: `Bearer ${token}` } })).text();
  return Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)[1]);
}

test('MCP_MAX_SUBSCRIPTIONS_PER_CLIENT with tokens: one more listen of a token ends that token\'s oldest (its listen answered -32003 naming the variable), never refused; another token is untouched', async () => {
  const file = writeConfig({ tools: [tool('t0')] });
  await withBridge({ CC_CONFIG: file, MCP_AUTH_TOKEN: `${A},${B}`, MCP_MAX_SUBSCRIPTIONS_PER_CLIENT: '2' }, async (bridge) => {
    const b1 = await listen(bridge.mcpUrl, 'b1', { toolsListChanged: true }, auth(B));
    const mine = [];
    for (let i = 1; i <= 4; i++) {
      const s = await listen(bridge.mcpUrl, `a${i}`, { toolsListChanged: true }, auth(A));
      assert.equal(s.status, 200);
      await until(() => acked(s));
      mine.push(s);
    }
    await until(() => mine[0].ended && mine[1].ended);
    for (const [i, s] of mine.slice(0, 2).entries()) {
      assert.deepEqual(finalOf(s), {
        jsonrpc: '2.0',
        id: `a${i + 1}`,
        error: {
          code: -32003,
          message: 'Subscription ended: this client opened a newer one and may hold 2 at once (MCP_MAX_SUBSCRIPTIONS_PER_CLIENT); its newest are kept',
          data: { limit: 2, variable: 'MCP_MAX_SUBSCRIPTIONS_PER_CLIENT' },
        },
      });
    }
    assert.equal(await metric(bridge, 'cc_mcp_subscriptions'), 3);
    assert.equal(await metric(bridge, 'cc_mcp_subscriptions_replaced_total'), 2);
    // the live ones still get changes; the ended ones nothing more
    writeConfig({ tools: [tool('t1')] }, file);
    assert.equal(bridge.hub.reload().ok, true);
    const changed = (s, id) => s.events.some((e) => e.method === 'notifications/tools/list_changed' && e.params._meta[SUB] === id);
    await until(() => changed(mine[2], 'a3') && changed(mine[3], 'a4') && changed(b1, 'b1'));
    assert.equal(mine[0].events.filter((e) => e.method === 'notifications/tools/list_changed').length, 0);
    assert.equal(b1.ended, false);
    for (const s of [...mine, b1]) s.close();
    await until(() => bridge.dispatcher.subscriptions.size === 0);
    assert.equal(bridge.tools.watching, 0);
  });
});

test('MCP_MAX_SUBSCRIPTIONS full with tokens: a newcomer takes the oldest of the token holding 2 more than it would; at a fair share it is refused 503', async () => {
  await withBridge({ MCP_AUTH_TOKEN: `${A} ${B}`, MCP_MAX_SUBSCRIPTIONS: '3' }, async (bridge) => {
    const hog = [];
    for (let i = 1; i <= 3; i++) hog.push(await listen(bridge.mcpUrl, i, {}, auth(A)));
    await until(() => hog.every(acked));
    const b1 = await listen(bridge.mcpUrl, 'b1', {}, auth(B));
    assert.equal(b1.status, 200);
    await until(() => hog[0].ended && acked(b1));
    assert.deepEqual(finalOf(hog[0]).error, {
      code: -32003,
      message: 'Subscription ended: 3 are open, the most allowed at once (MCP_MAX_SUBSCRIPTIONS), and this client held the most (3); its oldest was ended so another client could subscribe',
      data: { limit: 3, variable: 'MCP_MAX_SUBSCRIPTIONS' },
    });
    // A holds 2, B 1: neither may take from the other now
    for (const [token, id] of [[B, 'b2'], [A, 'a4']]) {
      const over = await listen(bridge.mcpUrl, id, {}, auth(token));
      await until(() => over.ended);
      assert.equal(over.status, 503);
      assert.equal(over.json.error.code, -32003);
      assert.match(over.json.error.message, /^Too many subscriptions: 3 are open.*\(MCP_MAX_SUBSCRIPTIONS\)/);
    }
    assert.deepEqual([hog[1].ended, hog[2].ended, b1.ended], [false, false, false]);
    for (const s of [...hog, b1]) s.close();
    await until(() => bridge.dispatcher.subscriptions.size === 0);
  });
});

test('without MCP_AUTH_TOKEN, an HTTP listen\'s client is its remote address (every local client shares 127.0.0.1): MCP_MAX_SUBSCRIPTIONS_PER_CLIENT ends that address\'s oldest; at MCP_MAX_SUBSCRIPTIONS one address is refused as before', async () => {
  await withBridge({ MCP_MAX_SUBSCRIPTIONS_PER_CLIENT: '2', MCP_MAX_SUBSCRIPTIONS: '3' }, async (bridge) => {
    const open = [];
    for (let i = 1; i <= 3; i++) open.push(await listen(bridge.mcpUrl, i, {}));
    await until(() => open[0].ended);
    assert.deepEqual(finalOf(open[0]).error.data, { limit: 2, variable: 'MCP_MAX_SUBSCRIPTIONS_PER_CLIENT' });
    await until(() => open.slice(1).every(acked));
    assert.equal(bridge.dispatcher.subscriptions.size, 2);
    for (const s of open) s.close();
    await until(() => bridge.dispatcher.subscriptions.size === 0);
  });
  await withBridge({ MCP_MAX_SUBSCRIPTIONS: '3' }, async (bridge) => {
    const open = [];
    for (let i = 1; i <= 3; i++) open.push(await listen(bridge.mcpUrl, i, {}));
    await until(() => open.every(acked));
    const over = await listen(bridge.mcpUrl, 4, {});
    await until(() => over.ended);
    assert.equal(over.status, 503);
    assert.equal(open.some((s) => s.ended), false);
    for (const s of open) s.close();
    await until(() => bridge.dispatcher.subscriptions.size === 0);
  });
});
