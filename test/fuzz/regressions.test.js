// Regression tests for the defects the hostile-input fuzz suite (test/fuzz/) found, each named after
// its defect, over a real bridge.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { linkComputer, rpc, session, until, withBridge } from '../helpers.js';
import { writeConfig } from '../config/write.js';
import { fixtureServer } from '../upstream/fixture.js';
import { toolDefinitionProblem } from '../../dist/upstream/tool-check.js';
import { upstreamUp } from './lib.js';
import { LISTEN_HEADERS, SUB, gauges, headWithLines, listenBody, newSession, openListen, rawStream } from './stream-lib.js';

test('405 without a message: a wrong method on /health or /metrics names the path and the methods to use', () =>
  withBridge({}, async (bridge) => {
    const origin = new URL(bridge.mcpUrl).origin;
    for (const [method, path] of [['POST', '/health'], ['DELETE', '/metrics'], ['PUT', '/health']]) {
      const res = await fetch(origin + path, { method });
      assert.equal(res.status, 405);
      assert.equal(res.headers.get('allow'), 'GET, HEAD');
      // before: {"error":"method not allowed"} alone, the one error body on the listener without a message
      assert.deepEqual(await res.json(), { error: 'method not allowed', message: `${method} is not allowed on ${path}; use GET, HEAD` });
    }
  }));

const FUZZ_UPSTREAM = fileURLToPath(new URL('../fixtures/fuzz-upstream.js', import.meta.url));
const upstream = (id, ...args) => ({ id, command: process.execPath, args: [FUZZ_UPSTREAM, ...args] });
const serverUp = (bridge, id) => upstreamUp(bridge, id, until);
const listedNames = async (bridge) => (await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 'l', method: 'tools/list' })).json.result.tools.map((t) => t.name);

test('upstream tool with an invalid x-mcp-header passed through: it is left out of tools/list with a warning naming it and why', () =>
  withBridge(
    {
      CC_CONFIG: writeConfig({
        servers: [
          fixtureServer('hdr', '--schema', JSON.stringify({ type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Bad Name' } } })),
          fixtureServer('num', '--schema', JSON.stringify({ type: 'object', properties: { n: { type: 'number', 'x-mcp-header': 'N' } } })),
          fixtureServer('root', '--schema', JSON.stringify({ type: 'object', 'x-mcp-header': 'Root' })),
          fixtureServer('items', '--schema', JSON.stringify({ type: 'object', properties: { ids: { type: 'array', items: { type: 'string', 'x-mcp-header': 'Id' } } } })),
          fixtureServer('twice', '--schema', JSON.stringify({ type: 'object', properties: { a: { type: 'string', 'x-mcp-header': 'Zone' }, b: { type: 'object', properties: { c: { type: 'integer', 'x-mcp-header': 'zone' } } } } })),
          fixtureServer('good', '--schema', JSON.stringify({ type: 'object', properties: { a: { type: 'string', 'x-mcp-header': 'Zone', default: { 'x-mcp-header': 'data, not a schema' } }, b: { type: 'object', properties: { c: { type: 'boolean', 'x-mcp-header': 'Flag' } } } } })),
        ],
      }),
    },
    async (bridge) => {
      for (const id of ['hdr', 'num', 'root', 'items', 'twice', 'good']) await serverUp(bridge, id);
      const names = await listedNames(bridge);
      // before: every one of them was listed, and 2026-07-28 clients had to drop them on their own
      for (const id of ['hdr', 'num', 'root', 'items', 'twice']) assert.ok(!names.includes(`${id}__composed`), id);
      assert.ok(names.includes('good__composed'));
      assert.ok(names.includes('hdr__echo'), 'the server\'s other tools stay');
      const warned = (re) => assert.ok(bridge.logs.some((l) => re.test(l)), re.source);
      warned(/upstream hdr listed tool "composed" with a malformed definition \(x-mcp-header at inputSchema\.properties\.region is not an HTTP header name token\); skipped/);
      warned(/upstream num listed tool "composed" .*x-mcp-header at inputSchema\.properties\.n annotates a property whose type is not "string", "integer" or "boolean"/);
      warned(/upstream root listed tool "composed" .*x-mcp-header at inputSchema is not on a property reached from the root through "properties" keys alone/);
      warned(/upstream items listed tool "composed" .*x-mcp-header at inputSchema\.properties\.ids\.items is not on a property/);
      warned(/upstream twice listed tool "composed" .*x-mcp-header at inputSchema\.properties\.b\.properties\.c repeats the name "zone" of the one at inputSchema\.properties\.a/);
    },
  ));

test('upstream tool definition that breaks the MCP Tool schema passed through (a validating client then refused the whole tools/list): it is left out with a warning', () =>
  withBridge({ CC_CONFIG: writeConfig({ servers: [upstream('bad', '--hostile-tools')] }) }, async (bridge) => {
    await serverUp(bridge, 'bad');
    const names = await listedNames(bridge);
    // before: bad__ok-tool (title 7, description an object, annotations a string), bad__string-type
    // (inputSchema.type "string") and bad__bad-props (properties a string) were all listed
    for (const name of ['bad__ok-tool', 'bad__string-type', 'bad__bad-props', 'bad__bad-header']) assert.ok(!names.includes(name), name);
    assert.ok(names.includes('bad__echo'));
    assert.ok(bridge.logs.some((l) => /listed tool "ok-tool" with a malformed definition \("title" is a number, not a string\)/.test(l)));
    assert.ok(bridge.logs.some((l) => /listed tool "string-type" with a malformed definition \(inputSchema\.type must be "object", got "string"\)/.test(l)));
  }));

test('the MCP Tool schema checks on upstream definitions, field by field', () => {
  const base = { name: 't', inputSchema: { type: 'object' } };
  const cases = [
    [{ description: {} }, '"description" is an object, not a string'],
    [{ annotations: [] }, '"annotations" is an array, not an object'],
    [{ _meta: null }, '"_meta" is null, not an object'],
    [{ icons: {} }, '"icons" is an object, not an array'],
    [{ inputSchema: { type: 'object', required: [1] } }, 'inputSchema.required must be an array of strings'],
    [{ outputSchema: 'x' }, '"outputSchema" is a string, not an object'],
    [{ outputSchema: { type: 'array' } }, 'outputSchema.type must be "object", got "array"'],
    [{ inputSchema: { type: 'object', properties: { a: { type: 'string', 'x-mcp-header': 5 } } } }, 'x-mcp-header at inputSchema.properties.a is not an HTTP header name token'],
    [{ inputSchema: { type: 'object', allOf: [{ properties: { a: { type: 'string', 'x-mcp-header': 'A' } } }] } }, 'x-mcp-header at inputSchema.allOf[0].properties.a is not on a property reached from the root through "properties" keys alone'],
  ];
  for (const [fields, problem] of cases) assert.equal(toolDefinitionProblem({ ...base, ...fields }), problem);
  // what passes: no type (servers that send {}), a valid outputSchema, annotations where they may be
  assert.equal(toolDefinitionProblem({ name: 't', inputSchema: {}, title: 'T', description: 'd', annotations: {}, icons: [], _meta: {}, outputSchema: { type: 'object', properties: {} } }), null);
  assert.equal(toolDefinitionProblem({ ...base, inputSchema: { type: 'object', properties: { 'x-mcp-header': { type: 'string' }, a: { type: 'integer', 'x-mcp-header': 'A', enum: [{ 'x-mcp-header': 1 }] } } } }), null);
  // nesting past what a message may carry is not walked
  let deep = { type: 'string', 'x-mcp-header': 'bad name' };
  for (let i = 0; i < 40; i++) deep = { type: 'object', properties: { a: deep } };
  assert.equal(toolDefinitionProblem({ ...base, inputSchema: deep }), null);
});

test('upstream text block whose text is not a string passed through as a successful result: the call is an isError naming the block', () =>
  withBridge({ CC_CONFIG: writeConfig({ servers: [upstream('txt', '--answer', '{"content":[{"type":"text","text":[1]}]}'), upstream('img', '--answer', '{"content":[{"type":"image","data":"AA=="}]}'), upstream('res', '--answer', '{"content":[{"type":"resource","resource":{"uri":"file:///a"}}]}'), upstream('res2', '--answer', '{"content":[{"type":"resource","resource":"x"}]}'), upstream('link', '--answer', '{"content":[{"type":"resource_link","uri":"file:///a"}]}'), upstream('new', '--answer', '{"content":[{"type":"future-kind","x":1},{"type":"resource","resource":{"uri":"u","blob":"AA=="}}]}')] }) }, async (bridge) => {
    for (const id of ['txt', 'img', 'res', 'res2', 'link', 'new']) await serverUp(bridge, id);
    const call = async (id) => (await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: `${id}__echo`, arguments: {} } })).json.result;
    const txt = await call('txt');
    // before: {"content":[{"type":"text","text":[1]}]} reached the client as a successful result
    assert.equal(txt.isError, true);
    assert.match(txt.content[0].text, /content\[0\] \(text\) needs a string "text", got an array/);
    assert.match((await call('img')).content[0].text, /content\[0\] \(image\) needs a string "mimeType", got nothing/);
    assert.match((await call('res')).content[0].text, /content\[0\] \(resource\) needs a string "resource\.text" or "resource\.blob"/);
    assert.match((await call('res2')).content[0].text, /content\[0\] \(resource\) needs a "resource" object with a string "uri"/);
    assert.match((await call('link')).content[0].text, /content\[0\] \(resource_link\) needs a string "name", got nothing/);
    // a content type this bridge does not know passes unchecked
    assert.equal((await call('new')).isError, undefined);
  }));

test('upstream content block typed "constructor" or "__proto__" threw in the content check (a type looked up on Object.prototype): an unknown type passes unchecked', () =>
  withBridge({ CC_CONFIG: writeConfig({ servers: [upstream('ctor', '--answer', '{"content":[{"type":"constructor"},{"type":"__proto__"},{"type":"toString","text":1}]}')] }) }, async (bridge) => {
    await serverUp(bridge, 'ctor');
    const res = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ctor__echo', arguments: {} } });
    // before: "function is not iterable" from inside the check
    assert.equal(res.json.result.isError, undefined, JSON.stringify(res.json));
    assert.deepEqual(res.json.result.content.map((c) => c.type), ['constructor', '__proto__', 'toString']);
  }));

test('pattern run on a huge argument stalled the event loop: a "pattern" is run on at most MCP_PATTERN_MAX_CHARS characters; longer fails the call at once', () =>
  withBridge(
    {
      CC_CONFIG: writeConfig({
        tools: [
          {
            name: 'load',
            description: 'loads a .lua file',
            inputSchema: { type: 'object', properties: { file: { type: 'string', pattern: '[a-z0-9]+\\.lua$' } }, patternProperties: { '^x[0-9]+$': { type: 'integer' } }, additionalProperties: false },
            target: 'argument',
            lua: 'return 1',
          },
        ],
      }),
    },
    async (bridge) => {
      const call = async (args) => (await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'load', arguments: { computerId: 1, ...args } } })).json.result;
      // measured before the fix: this pattern on 100,000 characters blocked the event loop ~8.7 s
      // (quadratic backtracking, the pattern being unanchored); the body limit allows ~1,000,000
      const long = await call({ file: 'a'.repeat(100_000) });
      assert.equal(long.isError, true);
      assert.equal(long.content[0].text, 'Invalid arguments for load: argument "file" is 100000 characters long; a "pattern" is checked on at most 1000 (MCP_PATTERN_MAX_CHARS).');
      // at the cap the pattern still runs (and fails here: no ".lua"); characters, not UTF-16 units
      assert.match((await call({ file: 'a'.repeat(1000) })).content[0].text, /argument "file" must match the pattern/);
      assert.match((await call({ file: '😀'.repeat(1000) })).content[0].text, /argument "file" must match the pattern/);
      // patternProperties keys: none is run on a key over the cap, which then matches nothing
      assert.match((await call({ ['x' + '1'.repeat(999)]: 'no' })).content[0].text, /argument "x1{58}\.\.\. \(1002 characters\) must be an integer, got a string/);
      assert.match((await call({ ['x' + '1'.repeat(1000)]: 1 })).content[0].text, /unknown argument "x1{58}\.\.\. \(1003 characters\); expected "file"/);
    },
  ));

test('MCP_PATTERN_MAX_CHARS sets the cap', () =>
  withBridge(
    { MCP_PATTERN_MAX_CHARS: '5', CC_CONFIG: writeConfig({ tools: [{ name: 'p', inputSchema: { type: 'object', properties: { s: { type: 'string', pattern: '^a+$' } } }, target: 'argument', lua: 'return 1' }] }) },
    async (bridge) => {
      const res = await rpc(new URL('/tools/p', bridge.mcpUrl).href, { computerId: 1, s: 'aaaaaa' });
      assert.equal(res.status, 422);
      assert.equal(res.json.error.message, 'Invalid arguments for p: argument "s" is 6 characters long; a "pattern" is checked on at most 5 (MCP_PATTERN_MAX_CHARS).');
    },
  ));

test('read-screen, send-input and job-status passed a computer\'s wrong-typed fields into structuredContent against their outputSchema, and let it name another computerId', () =>
  withBridge({}, async (bridge) => {
    const SCREEN = { width: 2, height: 1, cursorX: 1, cursorY: 1, cursorBlink: true, lines: ['ab'], foreground: ['00'], background: ['ff'] };
    const JOB = { job: 'j', kind: 'exec-lua', what: '', state: 'running', outputBytes: 0, output: '', cursor: 0 };
    let answer = null;
    const computer = await linkComputer(bridge, { computerId: 12, onRequest: () => ({ ok: true, result: answer }) });
    const call = async (name, args, result) => {
      answer = result;
      return (await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: { computerId: 12, ...args } } })).json.result;
    };
    // before: each of these was a successful result whose structuredContent broke the outputSchema
    // (integers 1.5 or 1e999, the latter written as null; cursorBlink a string), which a client that
    // checks structuredContent against outputSchema (the TypeScript SDK does) refuses
    for (const [name, args, result] of [
      ['read-screen', {}, { ...SCREEN, height: 1.5 }],
      ['read-screen', {}, JSON.parse(JSON.stringify(SCREEN).replace('"width":2', '"width":1e999'))],
      ['read-screen', {}, { ...SCREEN, cursorBlink: 'yes' }],
      ['send-input', { text: 'x' }, { queued: 0.5 }],
      ['send-input', { text: 'x' }, { queued: -1 }],
      ['job-status', { job: 'j' }, { ...JOB, cursor: 2.5 }],
    ]) {
      const got = await call(name, args, result);
      assert.equal(got.isError, true, `${name} ${JSON.stringify(got)}`);
      assert.match(got.content[0].text, /sent a malformed/);
    }
    // before: {computerId: 12, ...answer} let the answer's own computerId replace the link's
    assert.equal((await call('read-screen', {}, { ...SCREEN, computerId: 99 })).structuredContent.computerId, 12);
    assert.equal((await call('job-status', { job: 'j' }, { ...JOB, computerId: 99 })).structuredContent.computerId, 12);
    assert.equal((await call('read-screen', {}, (({ cursorBlink, ...rest }) => rest)(SCREEN))).isError, undefined);
    await computer.close();
  }));

test('an HTTP upstream that closed the connection mid-answer failed the call with undici\'s bare "terminated": it now says the answer was cut short', async () => {
  const server = createServer(async (req, res) => {
    if (req.method !== 'POST') return res.writeHead(405).end();
    let body = '';
    for await (const chunk of req) body += chunk;
    const msg = JSON.parse(body);
    if (msg.id === undefined) return res.writeHead(202).end();
    const result = msg.method === 'initialize' ? { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'cut', version: '1' } } : msg.method === 'tools/list' ? { tools: [{ name: 'json', inputSchema: { type: 'object' } }, { name: 'sse', inputSchema: { type: 'object' } }] } : { content: [{ type: 'text', text: 'x'.repeat(1000) }] };
    const text = JSON.stringify({ jsonrpc: '2.0', id: msg.id, result });
    if (msg.method !== 'tools/call') return res.writeHead(200, { 'content-type': 'application/json' }).end(text);
    // half the answer, then the connection goes away
    if (msg.params.name === 'json') res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(text.length) });
    else res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(msg.params.name === 'json' ? text.slice(0, 500) : `data: ${text.slice(0, 500)}`);
    setImmediate(() => res.destroy());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    await withBridge({ CC_CONFIG: writeConfig({ servers: [{ id: 'cut', url: `http://127.0.0.1:${server.address().port}/mcp` }] }) }, async (bridge) => {
      await serverUp(bridge, 'cut');
      for (const name of ['cut__json', 'cut__sse']) {
        const result = (await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: {} } })).json.result;
        assert.equal(result.isError, true);
        // before: 'upstream server "cut" failed on cut__json: tools/call did not get through: terminated'
        // (the request got through: 'was not answered'; the SSE answer was cut inside its event, and says so)
        const cutText = name === 'cut__json' ? 'the connection closed before the whole answer arrived' : 'the server closed its event stream in the middle of an event';
        assert.equal(result.content[0].text, `upstream server "cut" failed on ${name}: tools/call was not answered: ${cutText} (other side closed)`);
      }
    });
  } finally {
    server.closeAllConnections();
    server.close();
  }
});

test('Mcp-Param header compared with Number(): "0x2a", "0b101010", "0o52" passed for 42; an integer header must now be decimal text', () =>
  withBridge({ CC_CONFIG: writeConfig({ tools: [{ name: 'n', inputSchema: { type: 'object', properties: { count: { type: 'integer', 'x-mcp-header': 'Count' } } }, target: { computerId: 4 }, lua: 'return 1' }] }) }, async (bridge) => {
    const computer = await linkComputer(bridge, { computerId: 4, onRequest: () => ({ ok: true, result: { output: '', returns: [] } }) });
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
    const call = (header) =>
      rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'n', arguments: { count: 42 }, _meta: meta } }, { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'n', 'mcp-param-count': header });
    for (const header of ['0x2a', '0b101010', '0o52', '=?base64?MHgyYQ==?=', '=?base64?IDQy?=']) {
      const res = await call(header);
      // before: 200 and the tool ran, while an intermediary reading the header saw "0x2a", not 42
      assert.equal(res.status, 400, header);
      assert.equal(res.json.error.code, -32020);
      assert.equal(res.json.id, 5);
    }
    for (const header of ['42', '42.0', '4.2e1', '+42']) assert.equal((await call(header)).status, 200, header);
    assert.equal(computer.received.filter((f) => f.type === 'request').length, 4);
    await computer.close();
  }));

test('deep params._meta protocol version with MCP-Protocol-Version set: JSON.stringify in the header check overflowed the stack (500 Internal error); the mismatch now names the value\'s kind, and long values are cut', () =>
  withBridge({}, async (bridge) => {
    const headers = { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' };
    const deep = '{"a":'.repeat(20_000) + '1' + '}'.repeat(20_000);
    const meta = (version) => `{"jsonrpc":"2.0","id":"d","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":${version},"io.modelcontextprotocol/clientCapabilities":{}}}}`;
    const res = await rpc(bridge.mcpUrl, meta(deep), headers);
    assert.equal(res.status, 400, res.text.slice(0, 300));
    assert.equal(res.json.error.code, -32020);
    assert.equal(res.json.error.message, 'Header mismatch: MCP-Protocol-Version header value "2026-07-28" does not match params._meta protocol version an object');
    // a long string is quoted only so far (before: echoed whole)
    const long = await rpc(bridge.mcpUrl, meta(JSON.stringify('v'.repeat(70_000))), headers);
    assert.equal(long.status, 400);
    assert.match(long.json.error.message, /protocol version "v{59}\.\.\. \(70002 characters\)$/);
    // Mcp-Name against a deep params.name: the same
    const named = await rpc(bridge.mcpUrl, `{"jsonrpc":"2.0","id":"n","method":"tools/call","params":{"name":${deep},"arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, { ...headers, 'mcp-method': 'tools/call', 'mcp-name': 'x' });
    assert.equal(named.status, 400, named.text.slice(0, 300));
    assert.match(named.json.error.message, /does not match body params\.name an object$/);
    assert.deepEqual(bridge.logs.filter((l) => /MCP request failed|RangeError/.test(l)), []);
  }));

test('subscriptions/listen with an id longer than 64 KiB: its acknowledgement alone passed STREAM_MAX_QUEUED_BYTES and the stream was cut off before the client saw it; it now goes out whole and the stream lives', async () => {
  const file = writeConfig({ tools: [] });
  await withBridge({ CC_CONFIG: file }, async (bridge) => {
    const port = Number(new URL(bridge.mcpUrl).port);
    const id = 'i'.repeat(70_000);
    const s = openListen(port, id);
    assert.equal((await s.head).status, 200);
    await until(() => s.events.length === 1 || s.closed);
    assert.equal(s.closed, false, 'the stream was cut off');
    assert.equal(s.events[0].params._meta[SUB], id);
    writeConfig({ tools: [{ name: 'late', target: { computerId: 1 }, lua: 'return 1' }] }, file);
    assert.equal(bridge.hub.reload().ok, true);
    await until(() => s.events.length === 2);
    assert.equal(s.events[1].method, 'notifications/tools/list_changed');
    assert.match(await (await fetch(new URL('/metrics', bridge.mcpUrl))).text(), /^cc_mcp_subscriptions_cut_off_total 0$/m);
    await s.close();
    await until(() => bridge.dispatcher.subscriptions.size === 0);
  });
});

test('answers pipelined on one connection outlived it: node never closes an answer queued behind another (HTTP/1.1 pipelining) when the connection closes, so a GET /mcp stream or listen kept its MCP_MAX_GET_STREAMS / MCP_MAX_SUBSCRIPTIONS place and tool watcher, and a call\'s answer stayed in cc_http_answers_writing, for good', async () => {
  await withBridge({ MCP_MAX_SUBSCRIPTIONS: '4' }, async (bridge) => {
    const port = Number(new URL(bridge.mcpUrl).port);
    const session = await newSession(port);
    const post = (body, headers) => Buffer.concat([headWithLines('POST', '/mcp', headers, Buffer.byteLength(body), { close: false }), Buffer.from(body)]);
    const listen = (id) => post(JSON.stringify(listenBody(id)), Object.entries(LISTEN_HEADERS));
    const call = (id) => post(JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list' }), [['Content-Type', 'application/json'], ['Accept', 'application/json, text/event-stream']]);
    const get = headWithLines('GET', '/mcp', [['Accept', 'text/event-stream'], ['Mcp-Session-Id', session]], undefined, { close: false });
    const open = async () => {
      const g = await gauges(port);
      return g.cc_mcp_get_streams + g.cc_mcp_subscriptions;
    };
    const cases = [
      [[listen('a'), listen('b'), listen('c')], 3],
      [[get, get, get], 3],
      [[get, listen('d'), call('e'), call('f')], 2],
      // the stream reaches the head once the call before it is answered: node closes that one itself
      [[call('g'), get], 1],
    ];
    for (const [requests, streams] of cases) {
      const s = rawStream(port, Buffer.concat(requests));
      await until(async () => (await open()) === streams);
      await s.close();
      // before: the queued ones stayed (2 subscriptions, then 2 GET streams, ... their watchers, the calls' answers)
      await until(async () => {
        const g = await gauges(port);
        return g.cc_mcp_get_streams === 0 && g.cc_mcp_subscriptions === 0 && g.cc_http_answers_writing === 0;
      }, 5, 5_000).catch(async () => assert.fail(`left open: ${JSON.stringify(await gauges(port))}`));
      assert.equal(bridge.tools.watching, 0);
    }
    // the places are free: MCP_MAX_SUBSCRIPTIONS listens open again
    const again = ['x1', 'x2', 'x3', 'x4'].map((id) => openListen(port, id));
    assert.deepEqual((await Promise.all(again.map((s) => s.head))).map((h) => h.status), [200, 200, 200, 200]);
    await Promise.all(again.map((s) => s.close()));
  });
});

test('subscriptions/listen filter holding an array of strings where a boolean or a list of strings goes ({"toolsListChanged": ["yes"]}, resourceSubscriptions [["x"]]): describing it threw (JSON.stringify(undefined).length), so HTTP answered 500 and stdio nothing; now -32602 naming the field', () =>
  withBridge({}, async (bridge) => {
    const port = Number(new URL(bridge.mcpUrl).port);
    const cases = [
      [{ toolsListChanged: ['yes'] }, 'params.notifications.toolsListChanged must be a boolean, not an array'],
      [{ toolsListChanged: [['x']] }, 'params.notifications.toolsListChanged must be a boolean, not an array holding an array'],
      [{ resourceSubscriptions: [['x']] }, 'params.notifications.resourceSubscriptions must be an array of strings, not an array holding an array'],
      [{ promptsListChanged: ['a', 1] }, 'params.notifications.promptsListChanged must be a boolean, not an array holding number 1'],
    ];
    for (const [notifications, message] of cases) {
      const s = openListen(port, 'f', notifications);
      assert.equal((await s.head).status, 400, s.text.slice(0, 300));
      await s.done;
      const body = s.json();
      assert.equal(body.id, 'f');
      assert.equal(body.error.code, -32602);
      assert.ok(body.error.message.endsWith(message), body.error.message);
    }
    assert.deepEqual(bridge.logs.filter((l) => /MCP request failed|TypeError/.test(l)), []);
  }));

test('client strings echoed whole in errors and log lines: a 10 KB MCP-Protocol-Version (twice in one answer), Mcp-Method, Mcp-Name or Mcp-Param value, a 10 KB cancelled request id and its reason, a 10 KB Origin; each is now cut at 60 characters with its length', () =>
  withBridge({ CC_CONFIG: writeConfig({ tools: [{ name: 'region-tool', target: { computerId: 1 }, lua: 'return 1', inputSchema: { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' } } } }] }) }, async (bridge) => {
    const big = 'v'.repeat(10_000);
    const cut = /"v{59}\.\.\. \(10002 characters\)/;
    const base = { accept: 'application/json, text/event-stream' };
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
    // unsupported MCP-Protocol-Version: before, the message and data.requested each held all 10,000 characters
    const version = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { ...base, 'mcp-protocol-version': big });
    assert.equal(version.status, 400);
    assert.equal(version.json.error.code, -32022);
    assert.match(version.json.error.message, /^Unsupported protocol version: "v{59}\.\.\. \(10002 characters\); this server speaks /);
    assert.equal(version.json.error.data.requested, 'v'.repeat(60));
    assert.ok(version.text.length < 1000, `answer of ${version.text.length} characters`);
    // Mcp-Method mismatch
    const modern = { ...base, 'mcp-protocol-version': '2026-07-28' };
    const method = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: meta } }, { ...modern, 'mcp-method': big });
    assert.equal(method.status, 400);
    assert.equal(method.json.error.code, -32020);
    assert.match(method.json.error.message, new RegExp(`^Header mismatch: Mcp-Method header value ${cut.source} does not match body method "tools/list"$`));
    // Mcp-Name mismatch
    const name = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'probe-computers', arguments: {}, _meta: meta } }, { ...modern, 'mcp-method': 'tools/call', 'mcp-name': big });
    assert.equal(name.status, 400);
    assert.match(name.json.error.message, new RegExp(`^Header mismatch: Mcp-Name header value ${cut.source} does not match body params.name "probe-computers"$`));
    // Mcp-Param mismatch, the header long and the argument long
    const param = (region, header) => rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'region-tool', arguments: { region }, _meta: meta } }, { ...modern, 'mcp-method': 'tools/call', 'mcp-name': 'region-tool', 'mcp-param-region': header });
    const longHeader = await param('eu', big);
    assert.equal(longHeader.status, 400);
    assert.match(longHeader.json.error.message, new RegExp(`^Header mismatch: Mcp-Param-Region header value ${cut.source} does not match arguments.region "eu"$`));
    const longArgument = await param(big, 'eu');
    assert.equal(longArgument.status, 400);
    assert.match(longArgument.json.error.message, new RegExp(`^Header mismatch: Mcp-Param-Region header value "eu" does not match arguments.region ${cut.source}$`));
    // a 10 KB Origin: the 403 answer and the warning
    const origin = await fetch(bridge.mcpUrl, { method: 'POST', headers: { 'content-type': 'application/json', origin: `http://${big}` }, body: '{}' });
    assert.equal(origin.status, 403);
    const originText = await origin.text();
    assert.match(originText, /Origin \\"http:\/\/v{52}\.\.\. \(10009 characters\) is not allowed/);
    assert.ok(originText.length < 1000, `answer of ${originText.length} characters`);
    await until(() => bridge.logs.some((l) => /rejected request from Origin "http:\/\/v{52}\.\.\. \(10009 characters\)$/.test(l)));
    // a cancelled call with a 10 KB id and reason: the log line held both whole
    const computer = await linkComputer(bridge, { computerId: 7, onRequest: () => null });
    const s = await session(bridge.mcpUrl);
    const call = rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: big, method: 'tools/call', params: { name: 'exec-lua', arguments: { computerId: 7, code: 'sleep(60)', timeoutMs: 300000 } } }, s);
    await computer.next((f) => f.type === 'request' && f.method === 'exec-lua');
    const cancel = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: big, reason: 'r'.repeat(10_000) } }, s);
    assert.equal(cancel.status, 202);
    assert.equal((await call).json.id, big);
    const line = bridge.logs.find((l) => l.includes('client cancelled request'));
    assert.match(line, new RegExp(`client cancelled request ${cut.source}: "r{59}\\.\\.\\. \\(10002 characters\\)$`));
    assert.ok(line.length < 400, `log line of ${line.length} characters`);
    await computer.close();
  }));

test('client names echoed whole in errors: a 10 KB method (both revisions), tools/call or REST tool name, REST service or computer label came back in full; each is now cut at 60 characters with its length', () =>
  withBridge({}, async (bridge) => {
    const big = 'n'.repeat(10_000);
    const plain = /n{60}\.\.\. \(10000 characters\)/;
    const quoted = /"n{59}\.\.\. \(10002 characters\)/;
    const short = (res) => assert.ok(res.text.length < 1000, `answer of ${res.text.length} characters`);
    const legacy = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 1, method: big });
    assert.equal(legacy.json.error.code, -32601);
    assert.match(legacy.json.error.message, new RegExp(`^Method not found: ${plain.source}$`));
    short(legacy);
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
    const modern = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 2, method: big, params: { _meta: meta } }, { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': big });
    assert.equal(modern.json.error.code, -32601);
    assert.match(modern.json.error.message, new RegExp(`^Method not found: ${plain.source}$`));
    short(modern);
    const tool = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: big, arguments: {} } });
    assert.equal(tool.json.error.code, -32602);
    assert.equal(tool.json.error.message, `Unknown tool: ${'n'.repeat(60)}... (10000 characters)`);
    const label = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'exec-lua', arguments: { computer: big, code: 'return 1' } } });
    assert.equal(label.json.result.isError, true);
    assert.match(label.json.result.content[0].text, new RegExp(`^No linked computer has the label ${quoted.source}\\.`));
    short(label);
    const origin = new URL(bridge.mcpUrl).origin;
    // path and query share the ~16 KB header limit: 5,000 characters each
    const mid = 'n'.repeat(5_000);
    const rest = await fetch(`${origin}/tools/${mid}?service=${mid}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(rest.status, 404);
    const body = await rest.json();
    assert.equal(body.error.message, `Unknown tool "${'n'.repeat(59)}... (5002 characters) on service "${'n'.repeat(59)}... (5002 characters); GET /tools lists them`);
  }));
