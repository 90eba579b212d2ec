// The MCP dispatcher over plain values: a parsed body in, the reply (status + JSON-RPC body) out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../dist/config.js';
import { LinkRegistry } from '../../dist/link/registry.js';
import { createLogger } from '../../dist/log.js';
import { Dispatcher } from '../../dist/mcp/dispatch.js';
import { ToolRegistry } from '../../dist/tools/registry.js';
import { builtinSource } from '../../dist/tools/builtins.js';
import { BUILTIN_TOOLS } from '../../dist/tools/builtins.js';

// the safe tools (built-ins besides probe-computers and exec-lua): tools added later need no edit here
const SAFE_TOOLS = BUILTIN_TOOLS.map((t) => t.name).filter((n) => n !== 'probe-computers' && n !== 'exec-lua');


function dispatcher(env = {}, { links = new LinkRegistry(), config = loadConfig(env) } = {}) {
  const logs = [];
  const tools = new ToolRegistry(config);
  tools.setSource(builtinSource);
  const d = new Dispatcher({ links, tools, config, log: createLogger('debug', (l) => logs.push(l)), serverVersion: '1.2.3' });
  return Object.assign(d, { logs, links, tools });
}

const req = (id, method, params) => (params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params });

test('initialize echoes each supported revision and answers 2025-11-25 to anything else', async () => {
  const d = dispatcher();
  for (const [asked, answered] of [
    ['2025-03-26', '2025-03-26'],
    ['2025-06-18', '2025-06-18'],
    ['2025-11-25', '2025-11-25'],
    ['2024-11-05', '2025-11-25'],
    ['2030-01-01', '2025-11-25'],
  ]) {
    const params = { capabilities: {}, clientInfo: { name: 't', version: '0' } };
    if (asked !== undefined) params.protocolVersion = asked;
    const reply = await d.handleBody(req(1, 'initialize', params), true);
    assert.equal(reply.status, 200);
    assert.equal(reply.body.result.protocolVersion, answered, `asked ${asked}`);
  }
  // protocolVersion is required by the schema: absent or not a string, -32602 under the request's id
  for (const params of [undefined, { capabilities: {} }, { protocolVersion: 42 }]) {
    const bare = await d.handleBody(req(0, 'initialize', params), true);
    assert.equal(bare.status, 200);
    assert.equal(bare.body.id, 0);
    assert.equal(bare.body.error.code, -32602, JSON.stringify(params));
    assert.match(bare.body.error.message, /params\.protocolVersion/);
  }
});

test('initialize: capabilities, serverInfo with the given version, instructions naming the tools', async () => {
  const { body } = await dispatcher().handleBody(req(1, 'initialize', { protocolVersion: '2025-06-18' }), true);
  const { result } = body;
  assert.deepEqual(result.capabilities, { tools: {} });
  assert.equal(result.serverInfo.name, 'cc-mcp-bridge');
  assert.equal(result.serverInfo.version, '1.2.3');
  assert.equal(typeof result.instructions, 'string');
  assert.match(result.instructions, /probe-computers/);
  assert.match(result.instructions, /exec-lua/);

  const off = await dispatcher({ CC_EXEC_LUA: 'off' }).handleBody(req(1, 'initialize', { protocolVersion: '2025-11-25' }), true);
  assert.match(off.body.result.instructions, /probe-computers/);
  assert.doesNotMatch(off.body.result.instructions, /exec-lua/);
});

test('ping answers an empty result', async () => {
  assert.deepEqual(await dispatcher().handleBody(req(0, 'ping'), false), { status: 200, body: { jsonrpc: '2.0', id: 0, result: {} } });
});

test('notifications and client responses need no answer (202)', async () => {
  const d = dispatcher();
  for (const message of [
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 0, reason: 'x' } },
    { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'nobody' } },
    { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: { no: 1 } } },
    { jsonrpc: '2.0', method: 'notifications/cancelled', params: [1] },
    { jsonrpc: '2.0', method: 'notifications/cancelled' },
    { jsonrpc: '2.0', method: 'notifications/whatever', params: {} },
    { jsonrpc: '2.0', id: 0, result: {} },
    { jsonrpc: '2.0', id: 'x', error: { code: -1, message: 'no' } },
  ]) {
    assert.deepEqual(await d.handleBody(message, false), { status: 202, body: null }, JSON.stringify(message));
  }
});

test('unknown methods are -32601, server/discover included', async () => {
  const d = dispatcher();
  for (const method of ['server/discover', 'resources/list', 'prompts/list', 'nope']) {
    const reply = await d.handleBody(req(0, method), false);
    assert.equal(reply.status, 200);
    assert.deepEqual(reply.body.id, 0);
    assert.equal(reply.body.error.code, -32601, method);
    assert.ok(reply.body.error.message.includes(method));
  }
});

test('params that are not an object are -32602', async () => {
  const reply = await dispatcher().handleBody(req(3, 'ping', [1, 2]), false);
  assert.equal(reply.body.error.code, -32602);
  assert.equal(reply.body.id, 3);
});

test('a single invalid message is 400 -32600 with its id when it has one', async () => {
  const d = dispatcher();
  assert.deepEqual(await d.handleBody({ jsonrpc: '1.0', id: 0, method: 'ping' }, true), {
    status: 400,
    body: { jsonrpc: '2.0', id: 0, error: { code: -32600, message: 'Invalid Request: jsonrpc must be "2.0"' } },
  });
  for (const body of [null, 5, 'x', {}, { jsonrpc: '2.0', id: null, method: 'ping' }]) {
    const reply = await d.handleBody(body, true);
    assert.equal(reply.status, 400, JSON.stringify(body));
    assert.equal(reply.body.error.code, -32600);
    assert.equal(reply.body.id, null);
  }
});

test('tools/list: every tool with name, title, description, inputSchema and outputSchema', async () => {
  const { body } = await dispatcher().handleBody(req(0, 'tools/list'), false);
  const tools = body.result.tools;
  assert.deepEqual(
    tools.map((t) => t.name),
    ['probe-computers', 'exec-lua', ...SAFE_TOOLS],
  );
  for (const tool of tools) {
    for (const key of ['name', 'title', 'description']) assert.equal(typeof tool[key], 'string', `${tool.name}.${key}`);
    assert.equal(tool.inputSchema.type, 'object');
    assert.equal(tool.outputSchema.type, 'object');
  }
  const probe = tools.find((t) => t.name === 'probe-computers');
  assert.deepEqual(probe.inputSchema, { type: 'object', additionalProperties: false });
  assert.ok(probe.outputSchema.properties.computers);
  assert.equal(probe.annotations.title, probe.title);
  assert.equal(probe.annotations.readOnlyHint, true);
  assert.equal(body.result.nextCursor, undefined);
  // a null cursor is no cursor
  assert.equal((await dispatcher().handleBody(req(1, 'tools/list', { cursor: null }), false)).body.result.tools.length, 2 + SAFE_TOOLS.length);
});

test('tools/list without exec-lua when CC_EXEC_LUA=off', async () => {
  const { body } = await dispatcher({ CC_EXEC_LUA: 'off' }).handleBody(req(1, 'tools/list', {}), false);
  assert.deepEqual(
    body.result.tools.map((t) => t.name),
    ['probe-computers', ...SAFE_TOOLS],
  );
});

test('tools/list with a cursor we never issued is -32602', async () => {
  for (const cursor of ['abc', '', 0]) {
    const { body } = await dispatcher().handleBody(req(0, 'tools/list', { cursor }), false);
    assert.equal(body.id, 0);
    assert.equal(body.error.code, -32602, JSON.stringify(cursor));
  }
});

test('tools/call: an unknown tool is -32602 "Unknown tool: <name>"', async () => {
  const { status, body } = await dispatcher().handleBody(req(0, 'tools/call', { name: 'no-such-tool', arguments: {} }), false);
  assert.equal(status, 200);
  assert.deepEqual(body, { jsonrpc: '2.0', id: 0, error: { code: -32602, message: 'Unknown tool: no-such-tool' } });
});

test('tools/call without a string name is -32602', async () => {
  for (const params of [{}, { name: 5 }, { arguments: {} }]) {
    const { body } = await dispatcher().handleBody(req(1, 'tools/call', params), false);
    assert.equal(body.error.code, -32602, JSON.stringify(params));
  }
});

test('tools/call with arguments that fail the schema: an isError result naming the argument', async () => {
  const d = dispatcher();
  const cases = [
    ['probe-computers', { verbose: true }, /verbose/],
    ['exec-lua', {}, /"code"/],
    ['exec-lua', { code: 5 }, /code/],
    ['exec-lua', { code: 'return 1', computerId: -1 }, /computerId/],
    ['exec-lua', { code: 'return 1', timeoutMs: 0 }, /timeoutMs/],
    ['exec-lua', { code: 'return 1', extra: 1 }, /extra/],
  ];
  for (const [name, args, names] of cases) {
    const { status, body } = await d.handleBody(req(0, 'tools/call', { name, arguments: args }), false);
    assert.equal(status, 200);
    // arguments that are not an object at all break CallToolRequest: -32602 (test/mcp/spec-conformance.test.js)
    assert.equal(body.error, undefined, JSON.stringify(args));
    assert.equal(body.result.isError, true, JSON.stringify(args));
    assert.match(body.result.content[0].text, /^Invalid arguments for /);
    assert.match(body.result.content[0].text, names, body.result.content[0].text);
  }
});

test('tools/call probe-computers with no computers, arguments absent or null', async () => {
  const d = dispatcher();
  for (const params of [{ name: 'probe-computers' }, { name: 'probe-computers', arguments: null }, { name: 'probe-computers', arguments: {} }]) {
    const { body } = await d.handleBody(req(0, 'tools/call', params), false);
    assert.deepEqual(body.result, { content: [{ type: 'text', text: 'No computers connected.' }], structuredContent: { computers: [] } });
  }
});

test('tools/call of a disabled tool is an isError result, not a protocol error', async () => {
  const { body } = await dispatcher({ CC_EXEC_LUA: 'off' }).handleBody(
    req(2, 'tools/call', { name: 'exec-lua', arguments: { code: 'return 1', computerId: 0 } }),
    false,
  );
  assert.equal(body.result.isError, true);
  assert.match(body.result.content[0].text, /exec-lua is disabled.*CC_EXEC_LUA=off/);
});

test('a tool that throws inside the bridge answers an isError result and logs it', async (t) => {
  const d = dispatcher();
  t.mock.method(d.links, 'list', () => {
    throw new Error('registry exploded');
  });
  const { status, body } = await d.handleBody(req(0, 'tools/call', { name: 'probe-computers' }), false);
  assert.equal(status, 200);
  assert.equal(body.result.isError, true);
  assert.match(body.result.content[0].text, /probe-computers failed inside the bridge: registry exploded/);
  assert.ok(d.logs.some((l) => / error tool probe-computers failed: Error: registry exploded/.test(l)));
  assert.equal(d.activeCalls, 0);
});

test('a failure outside any tool answers -32603 with the request\'s id (never a 500 with id null)', async () => {
  const config = loadConfig({});
  let armed = false; // the tool registry reads the config once at start; explode only after that
  const broken = {
    ...config,
    get execLua() {
      if (armed) throw new TypeError('config exploded');
      return true;
    },
  };
  const d = dispatcher({}, { config: broken });
  armed = true;
  const { status, body } = await d.handleBody(req(1, 'initialize', { protocolVersion: '2025-11-25' }), false);
  assert.equal(status, 200);
  assert.equal(body.id, 1);
  assert.equal(body.error.code, -32603);
  assert.doesNotMatch(body.error.message, /exploded/, 'no internals in the answer');
  assert.ok(d.logs.some((l) => /initialize failed: TypeError: config exploded/.test(l)));
});

test('batches: allowed -> an array of answers in order; notifications and responses leave no answer', async () => {
  const d = dispatcher();
  const reply = await d.handleBody(
    [
      req(0, 'ping'),
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      req('b', 'nope'),
      { jsonrpc: '2.0', id: 9, result: {} },
      { jsonrpc: '1.0', id: 5, method: 'ping' },
      7,
      req(2, 'tools/call', { name: 'probe-computers' }),
    ],
    true,
  );
  assert.equal(reply.status, 200);
  assert.ok(Array.isArray(reply.body));
  assert.deepEqual(
    reply.body.map((r) => [r.id, r.error?.code ?? 'ok']),
    [
      [0, 'ok'],
      ['b', -32601],
      [5, -32600],
      [null, -32600],
      [2, 'ok'],
    ],
  );
  assert.deepEqual(reply.body[0].result, {});
});

test('batches: only notifications -> 202; empty -> 400; not allowed -> 400 -32600', async () => {
  const d = dispatcher();
  assert.deepEqual(
    await d.handleBody([{ jsonrpc: '2.0', method: 'notifications/initialized' }, { jsonrpc: '2.0', id: 0, result: {} }], true),
    { status: 202, body: null },
  );
  const empty = await d.handleBody([], true);
  assert.equal(empty.status, 400);
  assert.equal(empty.body.error.code, -32600);
  const refused = await d.handleBody([req(0, 'ping')], false);
  assert.equal(refused.status, 400);
  assert.equal(refused.body.id, null);
  assert.equal(refused.body.error.code, -32600);
  assert.match(refused.body.error.message, /batch/);
});

test('activeCalls is zero when nothing is in flight', async () => {
  const d = dispatcher();
  assert.equal(d.activeCalls, 0);
  await d.handleBody(req(0, 'tools/call', { name: 'probe-computers' }), false);
  assert.equal(d.activeCalls, 0);
});

test('2026-07-28 subscriptions/listen from a caller whose transport carries no stream: 400 -32600, nothing opened', async () => {
  const { handleModern } = await import('../../dist/mcp/modern-dispatch.js');
  const d = dispatcher();
  const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
  const reply = await handleModern(d, { jsonrpc: '2.0', id: 'l', method: 'subscriptions/listen', params: { _meta: meta, notifications: { toolsListChanged: true } } }, undefined, { scope: 'x' });
  assert.equal(reply.status, 400);
  assert.equal(reply.body.error.code, -32600);
  assert.match(reply.body.error.message, /needs a transport that carries a stream/);
  assert.equal(d.subscriptions.size, 0);
});

test('2026-07-28 subscriptions/listen once shutdown began (completeAll ran): 503 -32003, nothing opened', async () => {
  const { handleModern } = await import('../../dist/mcp/modern-dispatch.js');
  const d = dispatcher();
  const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
  const sent = [];
  const listen = { problem: null, key: (id) => `t\u0000${id}`, client: () => null, open: () => ({ send: (m) => sent.push(m), end: (m) => sent.push(m) }) };
  const body = (id) => ({ jsonrpc: '2.0', id, method: 'subscriptions/listen', params: { _meta: meta, notifications: { toolsListChanged: true } } });
  const open = await handleModern(d, body(1), undefined, { scope: 't', listen });
  assert.equal(open.streaming, true);
  assert.equal(sent[0].method, 'notifications/subscriptions/acknowledged');
  d.subscriptions.completeAll();
  assert.deepEqual(sent[1], { jsonrpc: '2.0', id: 1, result: { resultType: 'complete', _meta: { 'io.modelcontextprotocol/subscriptionId': 1, 'io.modelcontextprotocol/serverInfo': d.describe().serverInfo } } });
  const late = await handleModern(d, body(2), undefined, { scope: 't', listen });
  assert.equal(late.status, 503);
  assert.equal(late.body.error.code, -32003);
  assert.match(late.body.error.message, /shutting down/);
  assert.equal(d.subscriptions.size, 0);
  assert.equal(d.tools.watching, 0);
});

test('2026-07-28 subscriptions/listen: an id already open under the same key is -32602; MCP_MAX_SUBSCRIPTIONS one more is 503 -32003', async () => {
  const { handleModern } = await import('../../dist/mcp/modern-dispatch.js');
  const d = dispatcher({ MCP_MAX_SUBSCRIPTIONS: '2' });
  const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
  const listen = { problem: null, key: (id) => `t\u0000${id}`, client: () => null, open: () => ({ send() {}, end() {} }) };
  const body = (id) => ({ jsonrpc: '2.0', id, method: 'subscriptions/listen', params: { _meta: meta, notifications: {} } });
  assert.equal((await handleModern(d, body('a'), undefined, { scope: 't', listen })).streaming, true);
  const dup = await handleModern(d, body('a'), undefined, { scope: 't', listen });
  assert.equal(dup.status, 400);
  assert.equal(dup.body.error.code, -32602);
  assert.equal((await handleModern(d, body('b'), undefined, { scope: 't', listen })).streaming, true);
  const full = await handleModern(d, body('c'), undefined, { scope: 't', listen });
  assert.equal(full.status, 503);
  assert.equal(full.headers['retry-after'], '10');
  assert.deepEqual(full.body.error.data, { limit: 2 });
  assert.equal(d.subscriptions.size, 2);
  assert.equal(d.tools.watching, 0, 'filters without toolsListChanged watch nothing');
});

test('MCP_MAX_JSON_DEPTH: a text shorter than 2 * (limit + 1) is not walked (it cannot hold limit + 1 levels); at that length and with no length it is', async () => {
  const d = dispatcher({ MCP_MAX_JSON_DEPTH: '2' });
  const deep = [[[]]]; // 3 levels: its shortest text, '[[[]]]', is 6 = 2 * (2 + 1) characters
  for (const length of [6, 7, Infinity, undefined]) {
    const reply = d.tooDeep(deep, length);
    assert.equal(reply?.status, 400, String(length));
    assert.match(reply.body.error.message, /the body nests deeper than 2 levels \(MCP_MAX_JSON_DEPTH\)/);
  }
  // a length the value cannot have been parsed from: proof that the walk was skipped
  assert.equal(d.tooDeep(deep, 5), null);
  assert.equal(d.tooDeep([[]], 6), null);
  const message = { jsonrpc: '2.0', id: 4, method: 'ping', params: { a: {} } };
  const text = JSON.stringify(message);
  for (const reply of [await d.handleBody(message, false, undefined, text.length), await d.handleBody(message, false)]) {
    assert.equal(reply.status, 400);
    assert.equal(reply.body.id, 4);
  }
  assert.equal((await d.handleBody({ jsonrpc: '2.0', id: 5, method: 'ping', params: {} }, false, undefined, 52)).status, 200);
});

test('notifications/cancelled reaches only the calls with its id in its caller\'s scope (every one of them), and nothing else cancels', async () => {
  const { getEventListeners } = await import('node:events');
  const d = dispatcher();
  const running = new Map();
  d.tools.setSource({
    id: 'test',
    tools: () => [{
      name: 'wait',
      title: 'Wait',
      description: 'Waits until released or cancelled.',
      inputSchema: { type: 'object', properties: { tag: { type: 'string' } } },
      call: ({ tag }, { signal }) =>
        new Promise((resolve) => {
          running.set(tag, () => resolve({ content: [{ type: 'text', text: `${tag} done` }] }));
          signal.addEventListener('abort', () => resolve({ content: [{ type: 'text', text: `${tag} cancelled` }] }));
        }),
    }],
  });
  const call = (id, tag, caller) => d.handleBody(req(id, 'tools/call', { name: 'wait', arguments: { tag } }), false, caller).then((r) => r.body.result.content[0].text);
  const cancel = (method, requestId, scope) => d.handleBody({ jsonrpc: '2.0', method, params: { requestId } }, false, { scope });
  const controller = new AbortController();
  const calls = {
    a: call(7, 'a', { scope: 'one' }),
    b: call(7, 'b', { scope: 'two', signal: controller.signal }),
    c: call('7', 'c', { scope: 'one' }),
    d: call(7, 'd', { scope: 'one' }),
  };
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual([...running.keys()].sort(), ['a', 'b', 'c', 'd']);
  assert.equal(d.activeCalls, 4);
  // another notification naming the id is not a cancel
  await cancel('notifications/progress', 7, 'one');
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(d.activeCalls, 4);
  // scope one's id 7: calls a and d (the id repeated while a was in flight), not the string id '7', not scope two's 7
  await cancel('notifications/cancelled', 7, 'one');
  assert.equal(await calls.a, 'a cancelled');
  assert.equal(await calls.d, 'd cancelled');
  running.get('b')();
  running.get('c')();
  assert.equal(await calls.b, 'b done');
  assert.equal(await calls.c, 'c done');
  assert.equal(d.activeCalls, 0);
  // a call that ended follows its caller's signal no more
  assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
});
