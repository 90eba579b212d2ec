// GET /mcp for a session whose tool list may be stale, over real HTTP: a session issued before the
// tool set changed learns of it as its stream opens, and one issued after it does not. (Its commit
// said no test caught the two mutants it was written for; that was wrong: the mutation run had left
// out session-resume.test.js, whose 'bug: a tool change made while a 2025 session had no GET /mcp
// stream' fails with both. What this file adds is the session issued after the change.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { writeConfig } from '../config/write.js';
import { rpc, until, withBridge } from '../helpers.js';

const LIST_CHANGED = { jsonrpc: '2.0', method: 'notifications/tools/list_changed' };
const luaTool = (name) => ({ name, target: { computerId: 1 }, lua: 'return 1' });

async function initialize(url) {
  const version = '2025-11-25';
  const init = await rpc(url, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 't', version: '0' } } });
  assert.equal(init.status, 200, init.text);
  const headers = { 'mcp-protocol-version': version, 'mcp-session-id': init.headers.get('mcp-session-id') };
  assert.equal((await rpc(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers)).status, 202);
  return headers;
}

/** GET `url` as an event stream; resolves at its head, `events` then gathers each event's data. */
function openStream(url, headers) {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'GET', headers: { accept: 'text/event-stream', ...headers } });
    req.on('error', reject);
    req.on('response', (res) => {
      const stream = { status: res.statusCode, events: [], close: () => req.destroy() };
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        buffer += chunk;
        let cut;
        while ((cut = buffer.indexOf('\n\n')) !== -1) {
          const data = buffer.slice(0, cut).split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6));
          buffer = buffer.slice(cut + 2);
          if (data.length) stream.events.push(JSON.parse(data.join('\n')));
        }
      });
      res.on('error', () => {});
      resolve(stream);
    });
    req.end();
  });
}

test('a session issued before the tool set changed gets list_changed as soon as its GET stream opens; one issued after the change is current', async () => {
  const file = writeConfig({ tools: [luaTool('one')] });
  await withBridge({ CC_CONFIG: file }, async (bridge) => {
    const before = await initialize(bridge.mcpUrl);
    writeConfig({ tools: [luaTool('one'), luaTool('two')] }, file);
    assert.equal((await fetch(new URL('/reload', bridge.mcpUrl), { method: 'POST' })).status, 200);
    const after = await initialize(bridge.mcpUrl);
    const current = await openStream(bridge.mcpUrl, after);
    const stale = await openStream(bridge.mcpUrl, before);
    assert.equal(stale.status, 200);
    await until(() => stale.events.length === 1);
    assert.deepEqual(stale.events, [LIST_CHANGED]);
    // one more change reaches both; the current session's first notice is this one
    writeConfig({ tools: [luaTool('one')] }, file);
    assert.equal((await fetch(new URL('/reload', bridge.mcpUrl), { method: 'POST' })).status, 200);
    await until(() => current.events.length === 1 && stale.events.length === 2);
    assert.deepEqual(current.events, [LIST_CHANGED]);
    current.close();
    stale.close();
  });
});

test('MCP_MAX_GET_STREAMS full: the refusal is logged once while the limit holds, and once again after a stream opened in between (found by mutation testing: never re-arming the warning passed every test)', async () => {
  await withBridge({ MCP_MAX_GET_STREAMS: '1' }, async (bridge) => {
    const warnings = () => bridge.logs.filter((l) => /GET \/mcp refused: 1 event streams are open/.test(l)).length;
    const streams = async () => Number(/^cc_mcp_get_streams (\d+)$/m.exec(await (await fetch(new URL('/metrics', bridge.mcpUrl))).text())[1]);
    const [a, b, c] = [await initialize(bridge.mcpUrl), await initialize(bridge.mcpUrl), await initialize(bridge.mcpUrl)];
    const first = await openStream(bridge.mcpUrl, a);
    assert.equal(first.status, 200);
    for (let i = 0; i < 2; i++) assert.equal((await openStream(bridge.mcpUrl, b)).status, 503);
    assert.equal(warnings(), 1);
    first.close();
    await until(async () => (await streams()) === 0);
    const second = await openStream(bridge.mcpUrl, b);
    assert.equal(second.status, 200);
    assert.equal((await openStream(bridge.mcpUrl, c)).status, 503);
    assert.equal(warnings(), 2);
    second.close();
    await until(async () => (await streams()) === 0);
  });
});
