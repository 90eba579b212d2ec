// The MCP Inspector web UI's requests, replayed over real HTTP: headers and bodies as captured with a
// logging proxy in front of the bridge (2026-11-24) while headless Chromium drove the UI (README,
// "Connecting an MCP client"). 0.15.0 reaches the bridge through its own proxy process, which sends
// the page's 2025-06-18 initialize and then no MCP-Protocol-Version header at all; 2.12.0 with
// --protocol-era auto speaks 2026-07-28 with a listen and a _meta carrying logLevel and a string
// progressToken. Each test is named after the client whose sequence it replays.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { linkComputer, pongText, startTestBridge, until } from '../helpers.js';
import { writeConfig } from '../config/write.js';
import { listen } from '../mcp/listen-client.js';

const luaTool = (name) => ({ name, target: { computerId: 12 }, lua: 'return 1' });
const configFile = writeConfig({ tools: [luaTool('door')] });
const bridge = await startTestBridge({ CC_CONFIG: configFile });
after(() => bridge.close());
const answering = await linkComputer(bridge, {
  computerId: 12,
  computerLabel: 'base-turtle',
  onRequest: (frame) =>
    frame.method === 'ping' ? { ok: true, result: pongText(12, 'base-turtle') } : { ok: true, result: { output: `ran: ${frame.params.code}\n`, returns: [{ type: 'number', value: 42 }] } },
});
const silent = await linkComputer(bridge, { computerId: 5, onRequest: () => null });
after(() => Promise.all([answering.close(), silent.close()]));

let reloads = 0;
/** Changes the tool set the way the runs did: the config gains a Lua tool, then a reload. */
function changeTools() {
  reloads++;
  writeConfig({ tools: [luaTool('door'), luaTool(`lamp${reloads}`)] }, configFile);
  assert.equal(bridge.hub.reload().ok, true);
}

/** One POST as the client sent it; status, headers and the parsed body (null when empty). */
async function post(headers, body, signal) {
  const res = await fetch(bridge.mcpUrl, { method: 'POST', headers, body: JSON.stringify(body), signal });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: text === '' ? null : JSON.parse(text) };
}

/** GET /mcp read event by event (node:http, so nothing is buffered away). */
function getStream(headers) {
  return new Promise((resolve, reject) => {
    const req = request(bridge.mcpUrl, { method: 'GET', headers });
    req.on('error', reject);
    req.on('response', (res) => {
      const stream = { status: res.statusCode, type: res.headers['content-type'], events: [], close: () => req.destroy() };
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        buffer += chunk;
        let cut;
        while ((cut = buffer.indexOf('\n\n')) !== -1) {
          const data = buffer.slice(0, cut).split('\n').filter((l) => l.startsWith('data: '));
          buffer = buffer.slice(cut + 2);
          if (data.length) stream.events.push(JSON.parse(data.map((l) => l.slice(6)).join('\n')));
        }
      });
      res.on('error', () => {});
      resolve(stream);
    });
    req.end();
  });
}

// What the 0.15.0 proxy (SDK 1.32.2 StreamableHTTPClientTransport, user-agent "node") puts on each POST.
const proxyHeaders = { accept: 'application/json, text/event-stream', 'content-type': 'application/json', 'user-agent': 'node' };

test('MCP Inspector web UI 0.15.0 through its proxy: initialize at 2025-06-18, then no MCP-Protocol-Version header on any request; GET /mcp stream gets list_changed; tools/list, tools/call with and without arguments, ping; its request timeout cancels the call on the computer', async () => {
  const init = await post(proxyHeaders, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: { sampling: {}, roots: { listChanged: true } }, clientInfo: { name: 'mcp-inspector', version: '0.15.0' } } });
  assert.equal(init.status, 200, init.text);
  assert.equal(init.json.result.protocolVersion, '2025-06-18');
  assert.deepEqual(init.json.result.capabilities, { tools: { listChanged: true } });
  const session = { 'mcp-session-id': init.headers.get('mcp-session-id') };
  // the proxy forwards the page's messages as they are and never sets the version header afterwards
  const headers = { ...session, ...proxyHeaders };
  assert.equal((await post(headers, { jsonrpc: '2.0', method: 'notifications/initialized' })).status, 202);
  const stream = await getStream({ ...session, accept: 'text/event-stream', 'user-agent': 'node' });
  try {
    assert.equal(stream.status, 200);
    assert.match(stream.type, /^text\/event-stream/);

    const list = await post(headers, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { progressToken: 1 } } });
    assert.equal(list.status, 200, list.text);
    const names = list.json.result.tools.map((t) => t.name);
    for (const name of ['probe-computers', 'exec-lua', 'door']) assert.ok(names.includes(name), name);

    const probe = await post(headers, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { _meta: { progressToken: 2 }, name: 'probe-computers', arguments: {} } });
    assert.equal(probe.status, 200, probe.text);
    const pongs = probe.json.result.structuredContent.computers.filter((c) => c.status === 'pong');
    assert.deepEqual(pongs.map((c) => [c.computerId, c.result]), [[12, pongText(12, 'base-turtle')]]);

    // the form leaves empty fields out: only computerId (a number) and code
    const exec = await post(headers, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { _meta: { progressToken: 3 }, name: 'exec-lua', arguments: { computerId: 12, code: 'print("hi") return 6*7' } } });
    assert.equal(exec.status, 200, exec.text);
    assert.equal(exec.json.result.isError, undefined);
    assert.deepEqual(exec.json.result.structuredContent.returns, [{ type: 'number', value: 42 }]);
    assert.equal(exec.json.result.content[0].text, 'ran: print("hi") return 6*7\n=> 42');

    const ping = await post(headers, { jsonrpc: '2.0', id: 4, method: 'ping', params: { _meta: { progressToken: 4 } } });
    assert.deepEqual(ping.json, { jsonrpc: '2.0', id: 4, result: {} });

    changeTools();
    await until(() => stream.events.length > 0);
    assert.deepEqual(stream.events, [{ jsonrpc: '2.0', method: 'notifications/tools/list_changed' }]);

    // MCP_SERVER_REQUEST_TIMEOUT ran out: the SDK sends notifications/cancelled on another request
    const pending = post(headers, { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { _meta: { progressToken: 5 }, name: 'exec-lua', arguments: { computerId: 5, code: 'hang()' } } });
    const frame = await silent.next((f) => f.type === 'request' && f.params?.code === 'hang()');
    const cancel = await post(headers, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 5, reason: 'McpError: MCP error -32001: Request timed out' } });
    assert.equal(cancel.status, 202);
    assert.deepEqual(await silent.next((f) => f.type === 'cancel' && f.id === frame.id), { type: 'cancel', id: frame.id });
    const answer = await pending;
    assert.equal(answer.status, 200);
    assert.equal(answer.json, null); // a cancelled request is not answered
  } finally {
    stream.close();
  }
});

// The _meta 2.12.0 puts on every 2026-07-28 request (its server process, user-agent "node").
const clientMeta = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'mcp-inspector', version: '2.12.0' },
  'io.modelcontextprotocol/clientCapabilities': {
    sampling: {},
    elicitation: { form: {}, url: {} },
    roots: { listChanged: true },
    tasks: { list: {}, cancel: {}, requests: { sampling: { createMessage: {} }, elicitation: { create: {} } } },
    extensions: { 'io.modelcontextprotocol/tasks': {}, 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'], elicitation: {} }, 'io.modelcontextprotocol/skills': {} },
  },
};
const modernHeaders = (method, name) => ({
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': method,
  ...(name ? { 'mcp-name': name } : {}),
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'user-agent': 'node',
});

test('MCP Inspector web UI 2.12.0 --protocol-era auto: server/discover, subscriptions/listen "listen:0" told of a tool change, tools/list and tools/call with logLevel and a string progressToken in _meta; Cancel closes the request and the computer gets the cancel', async () => {
  const discover = await post(modernHeaders('server/discover'), { jsonrpc: '2.0', id: 'server-discover-probe-1', method: 'server/discover', params: { _meta: clientMeta } });
  assert.equal(discover.status, 200, discover.text);
  assert.ok(discover.json.result.supportedVersions.includes('2026-07-28'));
  assert.deepEqual(discover.json.result.capabilities, { tools: { listChanged: true } });

  const sub = await listen(bridge.mcpUrl, 'listen:0', undefined, { params: { _meta: clientMeta, notifications: { toolsListChanged: true } }, headers: { 'user-agent': 'node' } });
  try {
    assert.equal(sub.status, 200);
    const ack = await sub.next((e) => e.method === 'notifications/subscriptions/acknowledged');
    assert.equal(ack.params._meta['io.modelcontextprotocol/subscriptionId'], 'listen:0');
    assert.deepEqual(ack.params.notifications, { toolsListChanged: true });

    const meta = (progressToken) => ({ ...clientMeta, 'io.modelcontextprotocol/logLevel': 'debug', progressToken });
    const list = await post(modernHeaders('tools/list'), { method: 'tools/list', params: { _meta: meta(0) }, jsonrpc: '2.0', id: 0 });
    assert.equal(list.status, 200, list.text);
    assert.ok(list.json.result.tools.some((t) => t.name === 'exec-lua'));

    const exec = await post(modernHeaders('tools/call', 'exec-lua'), { method: 'tools/call', params: { name: 'exec-lua', arguments: { computerId: 12, code: 'print("hi") return 6*7' }, _meta: meta('10540805-3674-4b96-88de-b93c9c260d37') }, jsonrpc: '2.0', id: 2 });
    assert.equal(exec.status, 200, exec.text);
    assert.equal(exec.json.id, 2);
    assert.deepEqual(exec.json.result.structuredContent.returns, [{ type: 'number', value: 42 }]);

    changeTools();
    const notice = await sub.next((e) => e.method === 'notifications/tools/list_changed');
    assert.deepEqual(notice.params, { _meta: { 'io.modelcontextprotocol/subscriptionId': 'listen:0' } });

    // its Cancel button aborts the fetch: the request closes, no notice is sent
    const abort = new AbortController();
    const pending = post(modernHeaders('tools/call', 'exec-lua'), { method: 'tools/call', params: { name: 'exec-lua', arguments: { computerId: 5, code: 'hang() -- 2.12.0' }, _meta: meta('c1') }, jsonrpc: '2.0', id: 3 }, abort.signal).catch((error) => error);
    const frame = await silent.next((f) => f.type === 'request' && f.params?.code === 'hang() -- 2.12.0');
    abort.abort();
    assert.equal((await pending).name, 'AbortError');
    assert.deepEqual(await silent.next((f) => f.type === 'cancel' && f.id === frame.id), { type: 'cancel', id: frame.id });
  } finally {
    sub.close();
  }
});
