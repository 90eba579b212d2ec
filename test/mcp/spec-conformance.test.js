// The MCP revisions this bridge claims, checked to the letter where an earlier build did not follow
// them: each test names the revision and the spec page, over real HTTP and a real --stdio child.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rpc, startTestBridge, withBridge } from '../helpers.js';
import { run } from '../surfaces/stdio-child.js';

const INIT_2025_03 = { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'spec-test', version: '0' } };

test('bug: spec 2025-03-26 basic/lifecycle: initialize inside a JSON-RPC batch is refused (-32600 under its id) while the rest of the batch is answered; over HTTP such an initialize had been answered without a session id, declaring listChanged for a GET stream it could never open', { timeout: 60_000 }, () =>
  withBridge({}, async (bridge) => {
    const res = await rpc(bridge.mcpUrl, [
      { jsonrpc: '2.0', id: 'init', method: 'initialize', params: INIT_2025_03 },
      { jsonrpc: '2.0', id: 'p', method: 'ping' },
    ]);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('mcp-session-id'), null);
    const byId = new Map(res.json.map((r) => [r.id, r]));
    assert.equal(byId.get('init').error?.code, -32600, JSON.stringify(res.json));
    assert.match(byId.get('init').error.message, /initialize must be sent alone, not in a JSON-RPC batch/);
    assert.deepEqual(byId.get('p').result, {});
    // alone it is answered as ever, with its session id
    const alone = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'initialize', params: INIT_2025_03 });
    assert.equal(alone.json.result.protocolVersion, '2025-03-26');
    assert.ok(alone.headers.get('mcp-session-id'));
  }));

test('bug: spec 2025-03-26 basic/lifecycle: on stdio, initialize inside a batch is refused too (it had been answered, yet the surface never counted it as initialized, so the listChanged it declared was never sent)', { timeout: 60_000 }, () =>
  run({}, async (child) => {
    child.send([{ jsonrpc: '2.0', id: 'init', method: 'initialize', params: INIT_2025_03 }, { jsonrpc: '2.0', id: 'p', method: 'ping' }]);
    const answers = await child.next((m) => Array.isArray(m));
    const byId = new Map(answers.map((r) => [r.id, r]));
    assert.equal(byId.get('init').error?.code, -32600, JSON.stringify(answers));
    assert.deepEqual(byId.get('p').result, {});
    child.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: INIT_2025_03 });
    assert.equal((await child.answer(1)).result.protocolVersion, '2025-03-26');
  }));

test('bug: spec 2025-11-25 basic/index (JSON Schema usage): a Lua tool inputSchema declaring a dialect the bridge does not support in $schema is refused at start, saying so; a supported one is served over HTTP as written', { timeout: 60_000 }, async () => {
  const { writeConfig } = await import('../config/write.js');
  const tool = (inputSchema) => ({ tools: [{ name: 'dial', description: 'd', target: { computerId: 1 }, lua: 'return 1', inputSchema }] });
  // draft-04 reads exclusiveMinimum as a boolean: the schema below would have meant something else to a client reading it as declared
  for (const [schema, message] of [
    [{ $schema: 'http://json-schema.org/draft-04/schema#', type: 'object', properties: { n: { type: 'number', exclusiveMinimum: 0 } } }, /inputSchema\.\$schema.*names a JSON Schema dialect the bridge does not support \("http:\/\/json-schema\.org\/draft-04\/schema#"\); supported: https:\/\/json-schema\.org\/draft\/2020-12\/schema/],
    [{ $schema: 'https://example.com/my-dialect', type: 'object' }, /does not support \("https:\/\/example\.com\/my-dialect"\)/],
    [{ $schema: 7, type: 'object' }, /does not support \(a number\)/],
    [{ type: 'object', properties: { a: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'string' } } }, /properties\.a\.\$schema.*may only be at the root of inputSchema/],
  ]) {
    await assert.rejects(startTestBridge({ CC_CONFIG: writeConfig(tool(schema)) }), (err) => {
      assert.match(String(err.message) + JSON.stringify(err.problems ?? []), message);
      return true;
    });
  }
  for (const $schema of ['http://json-schema.org/draft-07/schema#', 'https://json-schema.org/draft/2019-09/schema', 'https://json-schema.org/draft/2020-12/schema']) {
    const inputSchema = { $schema, type: 'object', properties: { n: { type: 'number', exclusiveMinimum: 0 } } };
    await withBridge({ CC_CONFIG: writeConfig(tool(inputSchema)) }, async (bridge) => {
      const listed = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
      assert.deepEqual(listed.json.result.tools.find((t) => t.name === 'dial').inputSchema, inputSchema);
    });
  }
});

test('bug: spec 2025-11-25 server/tools (error handling): tools/call whose arguments is not an object fails the CallToolRequest schema, a protocol error (-32602), not a tool result; over HTTP in both eras and on stdio', { timeout: 60_000 }, async () => {
  const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
  const bad = [[1], 'x', 5, true];
  await withBridge({}, async (bridge) => {
    for (const args of bad) {
      const legacy = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 'l', method: 'tools/call', params: { name: 'list-computers', arguments: args } }, { 'mcp-protocol-version': '2025-11-25' });
      assert.equal(legacy.status, 200);
      assert.equal(legacy.json.error?.code, -32602, JSON.stringify([args, legacy.json]));
      assert.match(legacy.json.error.message, /params\.arguments must be an object/);
      const modern = await rpc(
        bridge.mcpUrl,
        { jsonrpc: '2.0', id: 'm', method: 'tools/call', params: { name: 'list-computers', arguments: args, _meta: META } },
        { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'list-computers' },
      );
      assert.equal(modern.json.error?.code, -32602, JSON.stringify([args, modern.json]));
    }
    // absent arguments (and null, which some clients send for "none") still mean no arguments
    for (const params of [{ name: 'list-computers' }, { name: 'list-computers', arguments: null }]) {
      const ok = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 'ok', method: 'tools/call', params }, { 'mcp-protocol-version': '2025-11-25' });
      assert.equal(ok.json.result?.isError, undefined, JSON.stringify(ok.json));
    }
  });
  await run({}, async (child) => {
    child.send({ jsonrpc: '2.0', id: 's', method: 'tools/call', params: { name: 'list-computers', arguments: 'x' } });
    assert.equal((await child.answer('s')).error?.code, -32602);
  });
});

test('bug: spec 2025-11-25 basic/index (requests, responses): an integer request id beyond 2^53-1 was answered under another id (12345678901234567890 came back as 12345678901234567000) after running the request; now it is refused, nothing runs, and ids up to 2^53-1 come back exactly, over HTTP and on stdio', { timeout: 60_000 }, async () => {
  const { linkComputer } = await import('../helpers.js');
  const big = '12345678901234567890';
  const probe = (id) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"probe-computers","arguments":{}}}`;
  await withBridge({}, async (bridge) => {
    let pings = 0;
    const computer = await linkComputer(bridge, { computerId: 1, onRequest: () => (pings++, { ok: true, result: 'pong' }) });
    for (const id of [big, `-${big}`, '9007199254740993']) {
      const res = await rpc(bridge.mcpUrl, probe(id));
      assert.equal(res.status, 400, res.text);
      assert.equal(res.json.id, null);
      assert.equal(res.json.error.code, -32600);
      assert.match(res.json.error.message, /cannot be echoed exactly/);
    }
    // refused before the body is read as a request (an unserved revision) is answered with no id either
    const unserved = await rpc(bridge.mcpUrl, probe(big), { 'mcp-protocol-version': '1999-01-01' });
    assert.equal(unserved.json.error.code, -32022);
    assert.equal(unserved.json.id, null);
    assert.equal(pings, 0, 'a refused request does not run');
    const ok = await rpc(bridge.mcpUrl, probe('9007199254740991'));
    assert.match(ok.text, /^\{"jsonrpc":"2\.0","id":9007199254740991,"result"/);
    assert.equal(pings, 1);
    await computer.close();
  });
  await run({}, async (child) => {
    child.raw(`{"jsonrpc":"2.0","id":${big},"method":"ping"}\n{"jsonrpc":"2.0","id":"after","method":"ping"}\n`);
    await child.answer('after');
    const refused = child.messages.find((m) => m.error);
    assert.equal(refused?.error.code, -32600, JSON.stringify(child.messages));
    assert.equal(refused.id, null);
    assert.ok(!child.out.stdout.includes('12345678901234567000'), child.out.stdout);
  });
});

test('bug: spec 2026-07-28 basic/versioning: on stdio a request declaring a served 2025 revision in _meta got -32022 "unsupported" with that very revision in its supported list; it is now served as that revision, as over HTTP, and only unserved revisions get -32022', { timeout: 60_000 }, () =>
  run({}, async (child) => {
    const meta = (v) => ({ 'io.modelcontextprotocol/protocolVersion': v, 'io.modelcontextprotocol/clientCapabilities': {} });
    child.send({ jsonrpc: '2.0', id: 'legacy', method: 'tools/list', params: { _meta: meta('2025-11-25') } });
    const legacy = await child.answer('legacy');
    assert.ok(legacy.result?.tools.some((t) => t.name === 'probe-computers'), JSON.stringify(legacy).slice(0, 300));
    assert.equal(legacy.result.resultType, undefined, 'a 2025 answer has no resultType');
    child.send({ jsonrpc: '2.0', id: 'ping', method: 'ping', params: { _meta: meta('2025-06-18') } });
    assert.deepEqual((await child.answer('ping')).result, {});
    child.send({ jsonrpc: '2.0', id: 'old', method: 'tools/list', params: { _meta: meta('2024-11-05') } });
    assert.equal((await child.answer('old')).error?.code, -32022);
    child.send({ jsonrpc: '2.0', id: 'new', method: 'tools/list', params: { _meta: meta('2026-07-28') } });
    assert.equal((await child.answer('new')).result?.resultType, 'complete');
  }));

test('bug: spec 2026-07-28 basic/index (per-response fields): the result that ends a subscriptions/listen at shutdown lacked _meta serverInfo, which the revision asks on every result; over HTTP and on stdio', { timeout: 60_000 }, async () => {
  const { listen, SUB } = await import('./listen-client.js');
  const { until } = await import('../helpers.js');
  const INFO = 'io.modelcontextprotocol/serverInfo';
  const bridge = await startTestBridge();
  const sub = await listen(bridge.mcpUrl, 'l', { toolsListChanged: true });
  await until(() => sub.events.length === 1);
  await bridge.close();
  await until(() => sub.ended);
  const last = sub.events.at(-1);
  assert.equal(last.id, 'l');
  assert.equal(last.result.resultType, 'complete');
  assert.equal(last.result._meta[SUB], 'l');
  assert.equal(last.result._meta[INFO]?.name, 'cc-mcp-bridge', JSON.stringify(last));
  await run({}, async (child) => {
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
    child.send({ jsonrpc: '2.0', id: 's', method: 'subscriptions/listen', params: { _meta: meta, notifications: { toolsListChanged: true } } });
    await child.next((m) => m.method === 'notifications/subscriptions/acknowledged');
    child.kill('SIGTERM');
    const answer = await child.answer('s');
    assert.equal(answer.result._meta[SUB], 's');
    assert.equal(answer.result._meta[INFO]?.name, 'cc-mcp-bridge', JSON.stringify(answer));
  });
});

test('bug: spec 2025-03-26/2025-06-18/2025-11-25 schema InitializeRequest: initialize without params.protocolVersion (or with a non-string one) was answered with a guessed revision and a session id; it is now -32602 naming the field, without a session id, over HTTP and on stdio', { timeout: 60_000 }, async () => {
  const bad = [undefined, 42, null, { v: 1 }];
  const paramsOf = (version) => {
    const params = { capabilities: {}, clientInfo: { name: 'spec-test', version: '0' } };
    if (version !== undefined) params.protocolVersion = version;
    return params;
  };
  await withBridge({}, async (bridge) => {
    for (const version of bad) {
      for (const header of [undefined, '2025-06-18', '2025-11-25']) {
        const res = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 'i', method: 'initialize', params: paramsOf(version) }, header ? { 'mcp-protocol-version': header } : {});
        assert.equal(res.json.id, 'i');
        assert.equal(res.json.error?.code, -32602, JSON.stringify([version, res.json]));
        assert.match(res.json.error.message, version === undefined ? /params\.protocolVersion is required/ : /params\.protocolVersion must be a string, not /);
        assert.equal(res.headers.get('mcp-session-id'), null);
      }
    }
    const none = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 0, method: 'initialize' });
    assert.equal(none.json.error?.code, -32602);
    // a string the bridge does not serve is still answered with the revision it prefers (lifecycle)
    const old = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'initialize', params: paramsOf('2024-11-05') });
    assert.equal(old.json.result.protocolVersion, '2025-11-25');
    assert.ok(old.headers.get('mcp-session-id'));
  });
  await run({}, async (child) => {
    child.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: paramsOf(undefined) });
    const refused = await child.answer(1);
    assert.equal(refused.error?.code, -32602, JSON.stringify(refused));
    // the refused initialize settled nothing: a proper one after it is answered as usual
    child.send({ jsonrpc: '2.0', id: 2, method: 'initialize', params: paramsOf('2025-06-18') });
    assert.equal((await child.answer(2)).result.protocolVersion, '2025-06-18');
  });
});

test('bug: spec 2025-11-25 and 2026-07-28 basic/index (error responses) and schema JSONRPCErrorResponse: an error for a request whose id could not be read carried "id": null, which their schema does not allow (the id is optional, never null); it is now left out in those revisions, and stays null in 2025-03-26 and 2025-06-18 (JSON-RPC 2.0), over HTTP and on stdio', { timeout: 60_000 }, async () => {
  const MODERN = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' };
  await withBridge({}, async (bridge) => {
    const bad = async (body, headers) => {
      const res = await rpc(bridge.mcpUrl, body, headers);
      assert.equal(res.status, 400, res.text);
      assert.ok(res.json?.error, res.text);
      return res.json;
    };
    for (const headers of [{}, { 'mcp-protocol-version': '2025-03-26' }, { 'mcp-protocol-version': '2025-06-18' }]) {
      for (const body of ['{', '{"jsonrpc":"2.0","id":{},"method":"ping"}', '[]']) {
        const json = await bad(body, headers);
        assert.ok('id' in json && json.id === null, JSON.stringify([headers, body, json]));
      }
    }
    for (const headers of [{ 'mcp-protocol-version': '2025-11-25' }, MODERN]) {
      for (const body of ['{', '{"jsonrpc":"2.0","id":{},"method":"ping"}', '[]', '[{"jsonrpc":"2.0","id":1,"method":"ping"}]']) {
        const json = await bad(body, headers);
        assert.equal('id' in json, false, JSON.stringify([headers, body, json]));
        assert.equal(json.jsonrpc, '2.0');
      }
      // a readable id is echoed as ever
      const known = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 7, method: 'nope/x', params: { _meta: {} } }, { ...headers, 'mcp-method': 'nope/x' });
      assert.equal(known.json.id, 7, known.text);
    }
  });
  await run({}, async (child) => {
    const badLine = async () => {
      const before = child.messages.length;
      child.raw('{\n');
      return child.next((m) => child.messages.indexOf(m) >= before && m.error?.code === -32700);
    };
    const INIT = (v) => ({ protocolVersion: v, capabilities: {}, clientInfo: { name: 'spec-test', version: '0' } });
    // nothing said yet: JSON-RPC 2.0's null
    assert.equal((await badLine()).id, null);
    child.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: INIT('2025-06-18') });
    await child.answer(1);
    assert.equal((await badLine()).id, null);
    child.send({ jsonrpc: '2.0', id: 2, method: 'initialize', params: INIT('2025-11-25') });
    assert.equal((await child.answer(2)).result.protocolVersion, '2025-11-25');
    assert.equal('id' in (await badLine()), false);
    // a request whose id cannot be read, in that revision
    const before = child.messages.length;
    child.send({ jsonrpc: '2.0', id: {}, method: 'ping' });
    const invalid = await child.next((m) => child.messages.indexOf(m) >= before && m.error?.code === -32600);
    assert.equal('id' in invalid, false, JSON.stringify(invalid));
  });
  await run({}, async (child) => {
    const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
    child.send({ jsonrpc: '2.0', id: 'd', method: 'server/discover', params: { _meta: META } });
    await child.answer('d');
    const before = child.messages.length;
    child.raw('not json\n');
    const parse = await child.next((m) => child.messages.indexOf(m) >= before && m.error?.code === -32700);
    assert.equal('id' in parse, false, JSON.stringify(parse));
  });
});

test('spec basic/index (request ids) and JSON-RPC 2.0: a number id with a fraction is taken (a sender\'s SHOULD NOT / MUST, README) and answered under the same number, over HTTP and on stdio', { timeout: 60_000 }, async () => {
  await withBridge({}, async (bridge) => {
    for (const [text, id] of [['1.5', 1.5], ['1.50', 1.5], ['-2.25', -2.25], ['1e2', 100]]) {
      const res = await rpc(bridge.mcpUrl, `{"jsonrpc":"2.0","id":${text},"method":"ping"}`, { 'mcp-protocol-version': '2025-11-25' });
      assert.deepEqual(res.json, { jsonrpc: '2.0', id, result: {} }, text);
    }
  });
  await run({}, async (child) => {
    child.raw('{"jsonrpc":"2.0","id":0.5,"method":"ping"}\n');
    assert.deepEqual((await child.answer(0.5)).result, {});
  });
});
