// REST over real HTTP: the list routes, tool calls, the status mapping, ?service=, cancel on
// disconnect and config aliases.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { FakeComputer, callTool, linkComputer, startTestBridge, until, withBridge } from '../helpers.js';
import { writeConfig } from '../config/write.js';
import { BUILTIN_TOOLS } from '../../dist/tools/builtins.js';
import { validate } from '../../dist/tools/schema.js';

// the safe tools (built-ins besides probe-computers and exec-lua): tools added later need no edit here
const SAFE_TOOLS = BUILTIN_TOOLS.map((t) => t.name).filter((n) => n !== 'probe-computers' && n !== 'exec-lua');


const base = (bridge) => bridge.mcpUrl.replace(/\/mcp$/, '');

async function rest(bridge, method, path, body, headers = {}) {
  const res = await fetch(base(bridge) + path, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  let json = null;
  try {
    json = text === '' ? null : JSON.parse(text);
  } catch {
    // left as text
  }
  return { status: res.status, headers: res.headers, text, json };
}

const tool = (name, call, inputSchema = { type: 'object' }) => ({ name, title: name, description: `${name} tool`, inputSchema, call });

test('GET /tools lists every offered tool with its schemas; GET /computers the linked computers', () =>
  withBridge({}, async (bridge) => {
    const tools = await rest(bridge, 'GET', '/tools');
    assert.equal(tools.status, 200);
    assert.deepEqual(tools.json.map((t) => t.name), ['probe-computers', 'exec-lua', ...SAFE_TOOLS]);
    const exec = tools.json[1];
    assert.deepEqual(Object.keys(exec).sort(), ['description', 'inputSchema', 'name', 'outputSchema', 'title']);
    assert.deepEqual(exec.inputSchema.required, ['code']);
    const head = await rest(bridge, 'HEAD', '/tools');
    assert.equal(head.status, 200);
    assert.equal(head.text, '');

    assert.deepEqual((await rest(bridge, 'GET', '/computers')).json, []);
    const a = await linkComputer(bridge, { computerId: 4, computerLabel: 'miner' });
    const b = await linkComputer(bridge, { computerId: 2 });
    const { status, json } = await rest(bridge, 'GET', '/computers');
    assert.equal(status, 200);
    assert.deepEqual(json.map((c) => [c.computerId, c.label]), [[2, null], [4, 'miner']]);
    for (const c of json) {
      assert.deepEqual(Object.keys(c).sort(), ['advanced', 'ccVersion', 'computerId', 'connectedAt', 'host', 'jobs', 'kind', 'label', 'lastSeenAt', 'peripherals', 'pinned', 'remoteAddress', 'version']);
      assert.equal(c.pinned, false, 'these fakes linked without a key');
      assert.equal(new Date(c.connectedAt).toISOString(), c.connectedAt);
      assert.equal(new Date(c.lastSeenAt).toISOString(), c.lastSeenAt);
      assert.match(c.remoteAddress, /127\.0\.0\.1/);
    }
    await Promise.all([a.close(), b.close()]);
  }));

test('GET /computers lacked the identity list-computers returns: now the same entries (kind, advanced, host, ccVersion, peripherals ...) plus remoteAddress, as the OpenAPI Computer schema says', () =>
  withBridge({}, async (bridge) => {
    const turtle = new FakeComputer(bridge.linkUrl, { computerId: 7, computerLabel: 'miner' });
    const hello = {
      type: 'hello',
      computerId: 7,
      computerLabel: 'miner',
      version: '0.1.0',
      kind: 'turtle',
      advanced: true,
      host: 'ComputerCraft 1.110.0 (Minecraft 1.21.1)',
      ccVersion: '1.110.0',
      peripherals: [{ name: 'left', types: ['modem'] }],
    };
    assert.equal((await turtle.link(hello)).type, 'hello-ok');
    const plain = await linkComputer(bridge, { computerId: 3 });
    const tool = (await callTool(bridge, 'list-computers')).structuredContent.computers;
    const { status, json } = await rest(bridge, 'GET', '/computers');
    assert.equal(status, 200);
    assert.equal(json.length, 2);
    for (const [i, c] of json.entries()) {
      const { remoteAddress, ...rest } = c;
      assert.match(remoteAddress, /127\.0\.0\.1/);
      assert.deepEqual(rest, tool[i]);
    }
    const seven = json.find((c) => c.computerId === 7);
    assert.deepEqual([seven.kind, seven.advanced, seven.host, seven.ccVersion, seven.peripherals], ['turtle', true, hello.host, '1.110.0', hello.peripherals]);
    assert.equal(json.find((c) => c.computerId === 3).kind, null);
    const doc = (await rest(bridge, 'GET', '/openapi.json')).json;
    const schema = doc.components.schemas.Computer;
    for (const field of ['kind', 'advanced', 'host', 'ccVersion', 'peripherals', 'remoteAddress']) assert.ok(schema.required.includes(field), field);
    for (const c of json) assert.equal(validate(c, schema, 'computer'), null);
    await Promise.all([turtle.close(), plain.close()]);
  }));

test('POST /tools/<name>: an empty body means {}; the answer is the tool result with isError false', () =>
  withBridge({}, async (bridge) => {
    const none = await rest(bridge, 'POST', '/tools/probe-computers');
    assert.equal(none.status, 200);
    assert.deepEqual(none.json, { content: [{ type: 'text', text: 'No computers connected.' }], structuredContent: { computers: [] }, isError: false });
    const c = await linkComputer(bridge, { computerId: 1, computerLabel: 'base' });
    for (const body of [undefined, '', '  \n', {}]) {
      const r = await rest(bridge, 'POST', '/tools/probe-computers', body);
      assert.equal(r.status, 200, JSON.stringify(body));
      assert.equal(r.json.content[0].text, 'pong from 1 (Label: base)');
      assert.equal(r.json.structuredContent.computers[0].status, 'pong');
      assert.equal(r.json.isError, false);
    }
    const encoded = await rest(bridge, 'POST', '/tools/probe%2Dcomputers');
    assert.equal(encoded.status, 200);
    await c.close();
  }));

test('status mapping: each failure has its status and a stable code', () =>
  withBridge({ MCP_MAX_BODY_BYTES: '2048' }, async (bridge) => {
    const answers = {
      fail: () => ({ ok: false, error: 'attempt to call nil' }),
      hang: () => null,
    };
    const c1 = await linkComputer(bridge, { computerId: 1, computerLabel: 'twin', onRequest: (f) => answers[f.params?.code]?.() ?? null });
    const c2 = await linkComputer(bridge, { computerId: 2, computerLabel: 'twin' });
    bridge.tools.setSource({
      id: 'test',
      tools: () => [
        tool('thrower', async () => {
          throw new Error('secret path /etc/x');
        }),
      ],
    });
    const cases = [
      ['POST', '/tools/exec-lua', '{"code": ', 400, 'invalid_json', /not valid JSON/],
      ['POST', '/tools/exec-lua', '[1]', 400, 'invalid_body', /got an array/],
      ['POST', '/tools/exec-lua', 'null', 400, 'invalid_body', /got null/],
      ['POST', '/tools/exec-lua', '"x"', 400, 'invalid_body', /got a string/],
      ['POST', '/tools/exec-lua', { computerId: 1, code: 7 }, 422, 'invalid_arguments', /argument "code" must be a string/],
      ['POST', '/tools/exec-lua', { computerId: 1, code: 'x', extra: 1 }, 422, 'invalid_arguments', /unknown argument "extra"/],
      ['POST', '/tools/exec-lua', { computerId: 1, computer: 'twin', code: 'x' }, 422, 'invalid_arguments', /not both/],
      ['POST', '/tools/nope', {}, 404, 'unknown_tool', /Unknown tool "nope"; GET \/tools lists them/],
      ['POST', '/tools/', {}, 404, 'unknown_tool', /Unknown tool ""/],
      ['POST', '/tools/%E0%A4%A', {}, 404, 'unknown_tool', /Unknown tool/],
      ['POST', '/tools/exec-lua', { computerId: 9, code: 'x' }, 404, 'unknown_computer', /No linked computer has id 9/],
      ['POST', '/tools/exec-lua', { computer: 'twin', code: 'x' }, 404, 'unknown_computer', /matches 2 computers/],
      ['POST', '/tools/exec-lua', { computerId: 1, code: 'hang', timeoutMs: 20 }, 504, 'timeout', /^computer 1 \(Label: twin\) did not answer within 20 ms; cancel sent\. A chunk that never yields/],
      ['POST', '/tools/thrower', {}, 500, 'internal', /thrower failed inside the bridge; its log has the details/],
      ['POST', '/tools/exec-lua', { computerId: 1, code: 'x'.repeat(3000) }, 413, 'body_too_large', /exceeds 2048 bytes/],
      ['GET', '/tools/exec-lua', undefined, 405, 'method_not_allowed', /GET is not allowed on \/tools\/exec-lua; use POST/],
      ['DELETE', '/tools', undefined, 405, 'method_not_allowed', /use GET, HEAD/],
      ['PUT', '/computers', '{}', 405, 'method_not_allowed', /use GET, HEAD/],
    ];
    for (const [method, path, body, status, code, message] of cases) {
      const r = await rest(bridge, method, path, body);
      const what = `${method} ${path} ${JSON.stringify(body)?.slice(0, 60)}`;
      assert.equal(r.status, status, `${what}: ${r.text}`);
      assert.deepEqual(Object.keys(r.json), ['error'], what);
      assert.deepEqual(Object.keys(r.json.error), ['code', 'message'], what);
      assert.equal(r.json.error.code, code, what);
      assert.match(r.json.error.message, message, what);
      if (status === 405) assert.equal(r.headers.get('allow'), method === 'GET' ? 'POST' : 'GET, HEAD');
    }
    assert.doesNotMatch((await rest(bridge, 'POST', '/tools/thrower', {})).text, /secret|\/etc|at /);

    // the computer answered with an error: the tool ran, so 200 with isError
    const failed = await rest(bridge, 'POST', '/tools/exec-lua', { computerId: 1, code: 'fail' });
    assert.equal(failed.status, 200);
    assert.equal(failed.json.isError, true);
    assert.equal(failed.json.structuredContent.error, 'attempt to call nil');

    // the link drops mid-call: 503
    const dropping = rest(bridge, 'POST', '/tools/exec-lua', { computerId: 1, code: 'hang' });
    await until(() => c1.received.filter((f) => f.type === 'request' && f.params.code === 'hang').length === 2);
    await c1.close();
    const dropped = await dropping;
    assert.equal(dropped.status, 503);
    assert.equal(dropped.json.error.code, 'unavailable');
    assert.match(dropped.json.error.message, /^the link to computer 1 \(Label: twin\) dropped before it answered/);
    await c2.close();
  }));

test('a disabled tool is 403', () =>
  withBridge({ CC_EXEC_LUA: 'off' }, async (bridge) => {
    const r = await rest(bridge, 'POST', '/tools/exec-lua', { computerId: 1, code: 'x' });
    assert.equal(r.status, 403);
    assert.equal(r.json.error.code, 'disabled');
    assert.deepEqual((await rest(bridge, 'GET', '/tools')).json.map((t) => t.name), ['probe-computers', ...SAFE_TOOLS]);
  }));

test('the client closing the connection cancels the call: the computer gets a cancel frame', () =>
  withBridge({}, async (bridge) => {
    const c = await linkComputer(bridge, { computerId: 1, onRequest: () => null });
    const url = new URL(base(bridge) + '/tools/exec-lua');
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json' } });
    req.on('error', () => {});
    req.end(JSON.stringify({ computerId: 1, code: 'sleep(60)', timeoutMs: 60000 }));
    const sent = await c.next((f) => f.type === 'request');
    req.destroy();
    assert.deepEqual(await c.next((f) => f.type === 'cancel'), { type: 'cancel', id: sent.id });
    await until(() => bridge.logs.some((l) => /REST call of exec-lua cancelled: the client went away/.test(l)));
    // the bridge still answers others
    assert.equal((await rest(bridge, 'POST', '/tools/probe-computers')).status, 200);
    await c.close();
  }));

test('?service=<serverId> names the upstream tool <serverId>__<name>', () =>
  withBridge({}, async (bridge) => {
    const seen = [];
    bridge.tools.setSource({
      id: 'upstream:files',
      tools: () => [tool('files__read', async (args) => (seen.push(args), { content: [{ type: 'text', text: `read ${args.path}` }] }))],
    });
    const r = await rest(bridge, 'POST', '/tools/read?service=files', { path: 'a.txt' });
    assert.equal(r.status, 200);
    assert.deepEqual(r.json, { content: [{ type: 'text', text: 'read a.txt' }], isError: false });
    assert.deepEqual(seen, [{ path: 'a.txt' }]);
    assert.equal((await rest(bridge, 'POST', '/tools/files__read', {})).status, 200);
    // an empty ?service= names no service: the path's name as it is
    assert.equal((await rest(bridge, 'POST', '/tools/files__read?service=', {})).status, 200);
    const other = await rest(bridge, 'POST', '/tools/read?service=music', {});
    assert.equal(other.status, 404);
    assert.equal(other.json.error.message, 'Unknown tool "read" on service "music"; GET /tools lists them');
  }));

test('config endpoints: aliases call their tool, reload replaces them, collisions and bad entries are config errors', () =>
  withBridge({}, async (bridge) => {
    const c = await linkComputer(bridge, { computerId: 1 });
    bridge.endpoints.apply([
      { path: '/probe', tool: 'probe-computers' },
      { path: '/x/ghost', tool: 'not-there' },
    ]);
    assert.deepEqual(bridge.endpoints.list(), [
      { path: '/probe', tool: 'probe-computers' },
      { path: '/x/ghost', tool: 'not-there' },
    ]);
    const probe = await rest(bridge, 'POST', '/probe');
    assert.equal(probe.status, 200);
    assert.equal(probe.json.content[0].text, 'pong from 1 (Label: null)');
    const get = await rest(bridge, 'GET', '/probe');
    assert.equal(get.status, 405);
    assert.equal(get.headers.get('allow'), 'POST');
    const ghost = await rest(bridge, 'POST', '/x/ghost');
    assert.equal(ghost.status, 404);
    assert.equal(ghost.json.error.code, 'unknown_tool');

    const problems = bridge.endpoints.check([
      { path: '/mcp', tool: 'a' },
      { path: '/tools/x', tool: 'a' },
      { path: '/', tool: 'a' },
      { path: '/openapi.json', tool: 'a' },
      { path: 'refuel', tool: 'a' },
      { path: '/a?b', tool: 'a' },
      { path: '/a/*', tool: 'a' },
      { path: '/ok', tool: '' },
      { path: '/ok', tool: 'a', method: 'GET' },
      'x',
      { path: '/dup', tool: 'a' },
      { path: '/dup', tool: 'b' },
      { path: '/probe', tool: 'exec-lua' },
    ]);
    const built = '"/refuel" (no query, no "*", at most 200 characters)';
    assert.deepEqual(problems.map((p) => `${p.path}: ${p.message}`), [
      '$.endpoints[0].path: "/mcp" collides with a built-in route',
      '$.endpoints[1].path: "/tools/x" collides with a built-in route',
      '$.endpoints[2].path: "/" collides with a built-in route',
      '$.endpoints[3].path: "/openapi.json" collides with a built-in route',
      `$.endpoints[4].path: must be a URL path such as ${built}`,
      `$.endpoints[5].path: must be a URL path such as ${built}`,
      `$.endpoints[6].path: must be a URL path such as ${built}`,
      '$.endpoints[7].tool: must be a tool name',
      '$.endpoints[8].method: unknown key; expected "path" and "tool"',
      '$.endpoints[9]: must be an object with "path" and "tool"',
      '$.endpoints[11].path: "/dup" is listed twice',
    ]);
    assert.deepEqual(bridge.endpoints.check({}), [{ path: '$.endpoints', message: 'must be an array of {"path", "tool"} objects' }]);
    assert.deepEqual(bridge.endpoints.check(undefined), []);
    assert.throws(() => bridge.endpoints.apply([{ path: '/health', tool: 'a' }]), {
      code: 'ERR_ENDPOINT_CONFIG',
      message: '$.endpoints[0].path: "/health" collides with a built-in route',
    });
    assert.equal((await rest(bridge, 'POST', '/probe')).status, 200, 'a refused set keeps the aliases in effect');

    bridge.endpoints.apply([{ path: '/ping-all', tool: 'probe-computers' }]);
    assert.equal((await rest(bridge, 'POST', '/probe')).status, 404);
    assert.equal((await rest(bridge, 'POST', '/ping-all')).status, 200);
    bridge.endpoints.apply(undefined);
    assert.equal((await rest(bridge, 'POST', '/ping-all')).status, 404);
    assert.deepEqual(bridge.endpoints.list(), []);
    await c.close();
  }));

test('with MCP_AUTH_TOKEN set, every REST route needs the bearer token', () =>
  withBridge({ MCP_AUTH_TOKEN: 'rest-token-0123456789abcdef' }, async (bridge) => {
    bridge.endpoints.apply([{ path: '/probe', tool: 'probe-computers' }]);
    const token = { authorization: 'Bearer rest-token-0123456789abcdef' };
    for (const [method, path] of [['GET', '/tools'], ['GET', '/computers'], ['GET', '/openapi.json'], ['POST', '/tools/probe-computers'], ['POST', '/probe']]) {
      assert.equal((await rest(bridge, method, path)).status, 401, `${method} ${path} without a token`);
      assert.equal((await rest(bridge, method, path, undefined, token)).status, 200, `${method} ${path} with the token`);
    }
  }));

test('CC_CONFIG endpoints: served from start, swapped on re-apply, a built-in path refuses the file', async () => {
  const file = writeConfig({ endpoints: [{ path: '/refuel', tool: 'probe-computers' }] });
  await withBridge({ CC_CONFIG: file }, async (bridge) => {
    assert.equal((await rest(bridge, 'POST', '/refuel')).status, 200);
    writeConfig({ endpoints: [{ path: '/fuel', tool: 'probe-computers' }] }, file);
    bridge.hub.apply(bridge.hub.read());
    assert.equal((await rest(bridge, 'POST', '/refuel')).status, 404);
    assert.equal((await rest(bridge, 'POST', '/fuel')).status, 200);
    writeConfig({ endpoints: [{ path: '/computers', tool: 'probe-computers' }] }, file);
    assert.throws(() => bridge.hub.read(), { code: 'ERR_CONFIG_FILE', message: `${file}: $.endpoints[0].path: "/computers" collides with a built-in route` });
    assert.equal((await rest(bridge, 'POST', '/fuel')).status, 200, 'the refused file changed nothing');
  });
  await assert.rejects(startTestBridge({ CC_CONFIG: file }), { code: 'ERR_CONFIG_FILE', message: /"\/computers" collides with a built-in route/ });
});

test('bug: an exec-lua timeout or dropped link through POST /tools/<name> had an error.message beginning "error: " (the MCP result text); now it is a sentence naming the computer, like every other REST error, and the MCP result text is unchanged', () =>
  withBridge({}, async (bridge) => {
    const computer = await linkComputer(bridge, { computerId: 7, computerLabel: 'miner', onRequest: () => null });
    const late = await rest(bridge, 'POST', '/tools/exec-lua', { computerId: 7, code: 'sleep(9)', timeoutMs: 30 });
    assert.equal(late.status, 504);
    assert.deepEqual(late.json, {
      error: {
        code: 'timeout',
        message: 'computer 7 (Label: miner) did not answer within 30 ms; cancel sent. A chunk that never yields cannot be stopped this way; CC itself stops it after about 7 s ("Too long without yielding").',
      },
    });
    // over MCP the same timeout is still exec-lua's result text
    const mcp = await callTool(bridge, 'exec-lua', { computerId: 7, code: 'sleep(9)', timeoutMs: 30 });
    assert.match(mcp.content[0].text, /^error: timed out after 30 ms; cancel sent\./);
    const dropping = rest(bridge, 'POST', '/tools/exec-lua', { computerId: 7, code: 'sleep(9)' });
    await until(() => computer.received.filter((f) => f.type === 'request').length === 3);
    await computer.close();
    const dropped = await dropping;
    assert.equal(dropped.status, 503);
    assert.equal(dropped.json.error.code, 'unavailable');
    assert.match(dropped.json.error.message, /^the link to computer 7 \(Label: miner\) dropped before it answered \(/);
  }));

test('MCP_MAX_JSON_DEPTH on REST bodies: one just long enough to nest a level too deep is walked and refused, saying so', () =>
  withBridge({ MCP_MAX_JSON_DEPTH: '8' }, async (bridge) => {
    // 9 levels take 18 characters, 2 * (8 + 1): the shortest body that can be too deep
    const deep = await rest(bridge, 'POST', '/tools/list-computers', `${'['.repeat(9)}${']'.repeat(9)}`);
    assert.equal(deep.status, 400);
    assert.deepEqual(deep.json.error, { code: 'invalid_body', message: 'The body nests deeper than 8 levels (MCP_MAX_JSON_DEPTH)' });
    const eight = await rest(bridge, 'POST', '/tools/list-computers', `${'['.repeat(8)}${']'.repeat(8)}`);
    assert.equal(eight.json.error.message, "The body must be a JSON object of the tool's arguments, got an array");
  }));
