// A real stdio MCP server (test/fixtures/mcp-stdio-server.js) spawned by the bridge from CC_CONFIG:
// paged listing, naming, results passed through whole, list_changed, cancel propagation, garbage and
// oversize lines, crash and restart, /health states, clean exit without orphans.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeConfig } from '../config/write.js';
import { fixtureServer } from './fixture.js';
import { callTool, processAlive, rpc, session, until, withBridge } from '../helpers.js';


const listTools = async (bridge) => (await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).json.result.tools;
const health = async (bridge) => (await (await fetch(new URL('/health', bridge.mcpUrl))).json());
const up = (bridge, id) => until(async () => (await health(bridge)).servers.find((s) => s.id === id && s.state === 'up'));

test('tools of a stdio server join the list as <id>__<name>, whole, across pages', () =>
  withBridge({ CC_CONFIG: writeConfig({ servers: [fixtureServer('fx')] }) }, async (bridge) => {
    const status = await up(bridge, 'fx');
    assert.deepEqual(status, { id: 'fx', transport: 'stdio', state: 'up', tools: 8, restarts: 0 });
    const tools = await listTools(bridge);
    const names = tools.map((t) => t.name);
    assert.deepEqual(names.filter((n) => n.startsWith('fx__')), [
      'fx__echo', 'fx__rich', 'fx__slow', 'fx__crash', 'fx__change', 'fx__garbage', 'fx__files-2e-read-2f-v2', 'fx__fails',
    ]);
    assert.ok(names.includes('probe-computers'));
    const rich = tools.find((t) => t.name === 'fx__rich');
    assert.deepEqual(rich, {
      name: 'fx__rich',
      description: 'Every content type',
      inputSchema: { type: 'object', properties: {} },
      outputSchema: { type: 'object', properties: { n: { type: 'number' } } },
      annotations: { readOnlyHint: true, title: 'Rich' },
      icons: [{ src: 'data:image/png;base64,AA==' }],
    });
    assert.deepEqual(tools.find((t) => t.name === 'fx__echo')._meta, { 'fixture/x': 1 });
    assert.ok(bridge.logs.some((l) => / info upstream fx stderr: fixture started pid=\d+/.test(l)), 'stderr reaches our log with the id');
  }));

test('results pass through whole; arguments and errors too; the dotted name reaches its tool', () =>
  withBridge({ CC_CONFIG: writeConfig({ servers: [fixtureServer('fx')] }) }, async (bridge) => {
    await up(bridge, 'fx');
    // as a 2025-06-18 client (resource_link blocks are rewritten for 2025-03-26 ones: test/mcp/older-content.test.js)
    const rich = (await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'fx__rich' } }, { 'mcp-protocol-version': '2025-06-18' })).json.result;
    assert.deepEqual(rich, {
      content: [
        { type: 'text', text: 'hi', annotations: { audience: ['user'] } },
        { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
        { type: 'audio', data: 'UklGRg==', mimeType: 'audio/wav' },
        { type: 'resource', resource: { uri: 'file:///a.txt', mimeType: 'text/plain', text: 'a' } },
        { type: 'resource_link', uri: 'file:///b.txt', name: 'b', mimeType: 'text/plain' },
      ],
      structuredContent: { n: 1 },
      isError: false,
      _meta: { 'fixture/y': true },
    });
    const args = { s: 'a]] "q"\n\0é🐢', n: [1, { x: null }] };
    assert.deepEqual((await callTool(bridge, 'fx__echo', args)).structuredContent, { args });
    assert.equal((await callTool(bridge, 'fx__files-2e-read-2f-v2')).content[0].text, 'read');
    const fails = await callTool(bridge, 'fx__fails');
    assert.equal(fails.isError, true);
    assert.equal(fails.content[0].text, 'upstream server "fx" refused the call: tools/call failed: it failed on purpose (-32000)');
    const { json } = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'fx__nope' } });
    assert.match(json.error.message, /Unknown tool: fx__nope/);
  }));

test('list_changed makes the bridge list again', () =>
  withBridge({ CC_CONFIG: writeConfig({ servers: [fixtureServer('fx')] }) }, async (bridge) => {
    await up(bridge, 'fx');
    let changes = 0;
    bridge.tools.onChange(() => changes++);
    assert.equal((await callTool(bridge, 'fx__change')).content[0].text, 'changed');
    await until(async () => (await listTools(bridge)).some((t) => t.name === 'fx__added'));
    assert.ok(changes >= 1);
    assert.equal((await health(bridge)).servers[0].tools, 9);
  }));

test('a list_changed that comes while the bridge is listing makes it list once more: the newest tools are offered', () =>
  withBridge({ CC_CONFIG: writeConfig({ servers: [fixtureServer('fx', '--change-while-listing')] }) }, async (bridge) => {
    await up(bridge, 'fx');
    assert.equal((await callTool(bridge, 'fx__change')).content[0].text, 'changed');
    await until(async () => (await listTools(bridge)).some((t) => t.name === 'fx__added2'));
    assert.equal((await health(bridge)).servers[0].tools, 10);
    assert.ok((await listTools(bridge)).some((t) => t.name === 'fx__added'));
  }));

test('a client cancel reaches the upstream as notifications/cancelled for its request', () =>
  withBridge({ CC_CONFIG: writeConfig({ servers: [fixtureServer('fx')] }) }, async (bridge) => {
    await up(bridge, 'fx');
    const s = await session(bridge.mcpUrl);
    const pending = rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 'slow-1', method: 'tools/call', params: { name: 'fx__slow' } }, s);
    await until(() => bridge.dispatcher.activeCalls === 1);
    await rpc(bridge.mcpUrl, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'slow-1', reason: 'user' } }, s);
    const { json } = await pending;
    assert.equal(json.result.isError, true);
    assert.match(json.result.content[0].text, /fx__slow was cancelled; upstream server "fx" was told to stop/);
    await until(() => bridge.logs.some((l) => /upstream fx stderr: cancelled \d+ \(cancelled by the caller\)/.test(l)));
  }));

test('a timeout cancels upstream too (CC_UPSTREAM_TIMEOUT_MS, or the server\'s timeoutMs)', () =>
  withBridge({ CC_CONFIG: writeConfig({ servers: [{ ...fixtureServer('fx'), timeoutMs: 5000 }] }), CC_UPSTREAM_TIMEOUT_MS: '1' }, async (bridge) => {
    await up(bridge, 'fx');
    bridge.logs.length = 0;
    const result = await callTool(bridge, 'fx__slow');
    assert.equal(result.isError, true);
    assert.match(result.content[0].text, /did not answer fx__slow within 5000 ms; the call was cancelled upstream/);
    await until(() => bridge.logs.some((l) => /stderr: cancelled \d+ \(timed out after 5000 ms\)/.test(l)));
  }));

test('garbage and oversize lines are dropped with a log line; an oversize answer fails its call at once, the duplicate after it is ignored', () =>
  withBridge({ CC_CONFIG: writeConfig({ servers: [fixtureServer('fx', '--big', '5000')] }), CC_UPSTREAM_MAX_MESSAGE_BYTES: '4096' }, async (bridge) => {
    await up(bridge, 'fx');
    const result = await callTool(bridge, 'fx__garbage');
    assert.equal(result.isError, true);
    assert.equal(result.content[0].text, 'upstream server "fx" sent a malformed answer: tools/call: the answer is over 4096 bytes (CC_UPSTREAM_MAX_MESSAGE_BYTES); dropped');
    assert.ok(bridge.logs.some((l) => / warn upstream fx wrote a line that is not JSON; ignored: this is not json/.test(l)));
    assert.ok(bridge.logs.some((l) => / warn upstream fx sent a line of \d+ bytes, over the 4096-byte limit; dropped/.test(l)));
    await until(() => bridge.logs.some((l) => /wrote a line that is not JSON; ignored: \[1,2/.test(l)));
    await until(() => bridge.logs.some((l) => /upstream fx answered an unknown or finished request \d+; ignored/.test(l)));
    assert.equal((await callTool(bridge, 'fx__echo', { a: 1 })).content[0].text, '{"a":1}');
  }));

test('a crash: tools leave, calls say why, the server restarts and comes back', () =>
  withBridge({ CC_CONFIG: writeConfig({ servers: [fixtureServer('fx')] }) }, async (bridge) => {
    await up(bridge, 'fx');
    const crashed = await callTool(bridge, 'fx__crash');
    assert.equal(crashed.isError, true);
    assert.match(crashed.content[0].text, /upstream server "fx" went down during the call: .*the process exited with code 3/);
    const down = await until(async () => (await health(bridge)).servers.find((s) => s.state !== 'up'));
    assert.ok(['down', 'starting'].includes(down.state));
    if (down.state === 'down') {
      assert.equal(down.reason, 'the process exited with code 3');
      assert.ok(!(await listTools(bridge)).some((t) => t.name.startsWith('fx__')), 'tools left the list');
      const call = await callTool(bridge, 'fx__echo');
      assert.equal(call.isError, true);
      assert.match(call.content[0].text, /upstream server "fx" (is down: the process exited with code 3|is starting)/);
    }
    assert.ok(bridge.logs.some((l) => /upstream fx stderr: crashing now/.test(l)));
    const back = await up(bridge, 'fx');
    assert.equal(back.restarts, 1);
    assert.equal((await callTool(bridge, 'fx__echo', { a: 1 })).structuredContent.args.a, 1);
  }));

test('a server that cannot start is down with the reason, and retried', () =>
  withBridge({ CC_CONFIG: writeConfig({ servers: [{ id: 'nope', command: '/nonexistent/mcp-server' }] }) }, async (bridge) => {
    const down = await until(async () => (await health(bridge)).servers.find((s) => s.state === 'down'));
    assert.equal(down.reason, 'cannot start /nonexistent/mcp-server: command not found: /nonexistent/mcp-server');
    const call = await callTool(bridge, 'nope__anything');
    assert.equal(call.isError, true);
    assert.match(call.content[0].text, /upstream server "nope" (is down: cannot start|is starting)/);
    assert.ok(bridge.logs.some((l) => /upstream nope is down: .*; restarting in 1 s/.test(l)));
  }));

test('an unknown protocol revision is refused with the reason', () =>
  withBridge({ CC_CONFIG: writeConfig({ servers: [fixtureServer('old', '--protocol', '1999-01-01')] }) }, async (bridge) => {
    const down = await until(async () => (await health(bridge)).servers.find((s) => s.state === 'down'));
    assert.match(down.reason, /the server speaks MCP 1999-01-01; this bridge knows 2024-11-05, /);
  }));

test('closing the bridge ends the server; one that ignores stdin EOF and SIGTERM is killed', () =>
  withBridge({ CC_CONFIG: writeConfig({ servers: [fixtureServer('stubborn', '--ignore-eof'), fixtureServer('nice')] }) }, async (bridge) => {
    await up(bridge, 'stubborn');
    await up(bridge, 'nice');
    const pids = bridge.logs.map((l) => /upstream (\w+) stderr: fixture started pid=(\d+)/.exec(l)).filter(Boolean).map((m) => Number(m[2]));
    assert.equal(pids.length, 2);
    assert.ok(pids.every(processAlive));
    await bridge.close();
    assert.ok(!pids.some(processAlive), 'no server outlives the bridge');
    assert.ok(bridge.logs.some((l) => /upstream stubborn stderr: ignoring SIGTERM/.test(l)), 'SIGTERM came before SIGKILL');
  }));

test('two upstream names for one bridge name: the second is left out; a failed re-list keeps the old list', () =>
  withBridge({ CC_CONFIG: writeConfig({ servers: [fixtureServer('fx', '--clash', '--fail-relist')] }) }, async (bridge) => {
    await up(bridge, 'fx');
    assert.ok(bridge.logs.some((l) => / warn upstream fx: tool "files-2e-read-2f-v2" maps to fx__files-2e-read-2f-v2 like another of its tools; left out/.test(l)));
    assert.equal((await callTool(bridge, 'fx__files-2e-read-2f-v2')).content[0].text, 'read', 'the first one keeps the name');
    await callTool(bridge, 'fx__change');
    await until(() => bridge.logs.some((l) => /upstream fx: re-listing tools failed: tools\/list failed: listing broke \(-32603\); keeping the previous list/.test(l)));
    assert.equal((await health(bridge)).servers[0].tools, 8);
  }));

test('bug: REST ?service=<serverId> takes the upstream\'s own tool name (files.read/v2), not only the name the bridge offers it under', () =>
  withBridge({ CC_CONFIG: writeConfig({ servers: [fixtureServer('fx')] }) }, async (bridge) => {
    await up(bridge, 'fx');
    const post = (path) =>
      fetch(new URL(path, bridge.mcpUrl), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
        .then(async (r) => ({ status: r.status, json: await r.json() }));
    // the bridge's own name for it, with and without ?service=, as before
    for (const path of ['/tools/fx__files-2e-read-2f-v2', '/tools/files-2e-read-2f-v2?service=fx']) {
      const r = await post(path);
      assert.equal(r.status, 200, path);
      assert.equal(r.json.content[0].text, 'read', path);
    }
    // the name the upstream lists (what its own documentation calls it), escaped in the URL or not
    for (const path of ['/tools/files.read%2Fv2?service=fx', '/tools/files.read/v2?service=fx']) {
      const r = await post(path);
      assert.equal(r.status, 200, `${path}: ${JSON.stringify(r.json)}`);
      assert.equal(r.json.content[0].text, 'read', path);
    }
    // a name the upstream does not list is still unknown, and so is its own name without ?service=
    const none = await post('/tools/files.read?service=fx');
    assert.equal(none.status, 404);
    assert.equal(none.json.error.message, 'Unknown tool "files.read" on service "fx"; GET /tools lists them');
    assert.equal((await post('/tools/files.read%2Fv2')).status, 404);
  }));
