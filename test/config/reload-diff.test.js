// Reload diffs beyond add/remove: a changed Lua tool (calls in flight keep what they were sent
// with), every Lua tool removed, a file that collides with a built-in (nothing changes), a server
// changed while it is down, and a server moved from stdio to Streamable HTTP under the same id.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeConfig } from './write.js';
import { fixtureServer } from '../upstream/fixture.js';
import { callTool, linkComputer, rpc, startTestBridge, until, withBridge } from '../helpers.js';

const RESULT = (n) => ({ output: '', returns: [{ type: 'number', value: n }], truncated: false });
const names = async (bridge) => (await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).json.result.tools.map((t) => t.name);
const serverStatus = (bridge, id) => bridge.hub.serverStatus().find((s) => s.id === id);

test('a changed Lua tool: reported as changed, new calls get the new code and schema, a call in flight finishes on the old', async () => {
  const file = writeConfig({ tools: [{ name: 'refuel', target: { computerId: 1 }, lua: 'return 1' }] });
  await withBridge({ CC_CONFIG: file }, async (bridge) => {
    const frames = [];
    let release;
    await linkComputer(bridge, {
      computerId: 1,
      onRequest: (frame) => {
        frames.push(frame);
        if (frames.length === 1) return new Promise((resolve) => (release = () => resolve({ ok: true, result: RESULT(1) })));
        return { ok: true, result: RESULT(2) };
      },
    });
    const first = callTool(bridge, 'refuel');
    await until(() => frames.length === 1);

    writeConfig({ tools: [{ name: 'refuel', target: { computerId: 1 }, lua: 'return 2', inputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } }] }, file);
    const result = bridge.hub.reload();
    assert.equal(result.ok, true);
    assert.deepEqual(result.tools, { added: [], removed: [], changed: ['refuel'] });
    assert.equal(result.summary, 'tools changed: refuel');

    const refused = await callTool(bridge, 'refuel');
    assert.equal(refused.isError, true);
    assert.equal(refused.content[0].text, 'Invalid arguments for refuel: argument "n" is required.');
    assert.equal((await callTool(bridge, 'refuel', { n: 5 })).content[0].text, '=> 2');
    assert.deepEqual(frames[1].params, { code: 'return 2', args: { n: 5 } });

    release();
    assert.equal((await first).content[0].text, '=> 1');
    assert.deepEqual(frames[0].params, { code: 'return 1', args: {} });
  });
});

test('removing every Lua tool, a reload that would shadow a built-in, and a reload with only key order changed', async () => {
  const tool = { name: 'door', target: { computerId: 4 }, lua: 'return true', description: 'd' };
  const file = writeConfig({ tools: [tool] });
  await withBridge({ CC_CONFIG: file }, async (bridge) => {
    assert.ok((await names(bridge)).includes('door'));

    // a Lua tool named like a built-in: refused with the path and the owner, nothing changes
    writeConfig({ tools: [{ ...tool, name: 'exec-lua' }] }, file);
    const clash = await fetch(new URL('/reload', bridge.mcpUrl), { method: 'POST' });
    assert.equal(clash.status, 422);
    assert.deepEqual((await clash.json()).problems, [{ path: '$.tools[0].name', message: 'tool name "exec-lua" is already taken by builtin' }]);
    assert.ok((await names(bridge)).includes('door'));

    // the same definition with its keys in another order is no change
    writeConfig({ tools: [Object.fromEntries(Object.entries(tool).reverse())] }, file);
    assert.equal(bridge.hub.reload().changed, false);

    writeConfig({}, file);
    assert.deepEqual(bridge.hub.reload().tools, { added: [], removed: ['door'], changed: [] });
    assert.ok(!(await names(bridge)).includes('door'));
    const { json } = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'door' } });
    assert.match(json.error.message, /Unknown tool: door/);
  });
});

test('a server changed while it is down (between restarts) is replaced by one with its new definition', async () => {
  const file = writeConfig({ servers: [{ id: 'x', command: '/nonexistent/server' }] });
  await withBridge({ CC_CONFIG: file }, async (bridge) => {
    const down = await until(() => serverStatus(bridge, 'x')?.state === 'down' && serverStatus(bridge, 'x'));
    assert.match(down.reason, /command not found/);
    writeConfig({ servers: [fixtureServer('x')] }, file);
    assert.deepEqual(bridge.hub.reload().servers, { added: [], removed: [], changed: ['x'] });
    await until(() => serverStatus(bridge, 'x')?.state === 'up', 5, 20_000);
    assert.equal(serverStatus(bridge, 'x').restarts, 0, 'a new server, not a restart of the old one');
    assert.equal((await callTool(bridge, 'x__echo', { a: 1 })).structuredContent.args.a, 1);
    assert.ok(bridge.logs.some((l) => /upstream x is down: .*command not found/.test(l)));
  });
});

test('a server moved from stdio to Streamable HTTP under the same id: its tools now come from the new place', async () => {
  const far = await startTestBridge();
  try {
    const file = writeConfig({ servers: [fixtureServer('x')] });
    await withBridge({ CC_CONFIG: file }, async (bridge) => {
      await until(() => serverStatus(bridge, 'x')?.state === 'up');
      assert.ok((await names(bridge)).includes('x__echo'));
      writeConfig({ servers: [{ id: 'x', url: far.mcpUrl }] }, file);
      assert.deepEqual(bridge.hub.reload().servers, { added: [], removed: [], changed: ['x'] });
      await until(() => serverStatus(bridge, 'x')?.transport === 'http' && serverStatus(bridge, 'x').state === 'up');
      const now = await names(bridge);
      assert.ok(now.includes('x__probe-computers') && !now.includes('x__echo'), now.join());
      assert.equal((await callTool(bridge, 'x__probe-computers')).content[0].text, 'No computers connected.');
    });
  } finally {
    await far.close();
  }
});

test('a reload that only changes a tool, only moves an alias to another tool, or only removes is a change (found by mutation testing: "changed" not counting changes, removals or endpoints, or an alias known by its path alone, passed every test)', async () => {
  const tool = (name, lua = 'return 1') => ({ name, target: { computerId: 1 }, lua });
  const file = writeConfig({ tools: [tool('a'), tool('b')], endpoints: [{ path: '/go', tool: 'a' }] });
  await withBridge({ CC_CONFIG: file }, async (bridge) => {
    writeConfig({ tools: [tool('a', 'return 2'), tool('b')], endpoints: [{ path: '/go', tool: 'a' }] }, file);
    const changed = bridge.hub.reload();
    assert.deepEqual([changed.changed, changed.summary], [true, 'tools changed: a']);
    // the alias /go now runs b: the old alias is removed and the new one added (an alias is its path and tool)
    writeConfig({ tools: [tool('a', 'return 2'), tool('b')], endpoints: [{ path: '/go', tool: 'b' }] }, file);
    const moved = bridge.hub.reload();
    assert.deepEqual([moved.changed, moved.endpoints], [true, { added: ['/go -> b'], removed: ['/go -> a'], changed: [] }]);
    writeConfig({ tools: [tool('a', 'return 2')], endpoints: [] }, file);
    const removed = bridge.hub.reload();
    assert.deepEqual([removed.changed, removed.summary], [true, 'tools removed: b; endpoints removed: /go -> b']);
    assert.equal(bridge.hub.reload().changed, false, 'the same file again');
  });
});

test('a reload applies what it reports (found by mutation testing): a removed server\'s tools leave tools/list, a removed alias stops answering, an alias clashing with a route is refused, and a server may take the prefix of a Lua tool the same file drops', async () => {
  const tool = (name) => ({ name, target: { computerId: 1 }, lua: 'return 1' });
  const file = writeConfig({ tools: [tool('a'), tool('ab__x')], servers: [fixtureServer('fx')], endpoints: [{ path: '/go', tool: 'a' }] });
  await withBridge({ CC_CONFIG: file }, async (bridge) => {
    await until(() => serverStatus(bridge, 'fx')?.state === 'up', 5, 20_000);
    assert.ok((await names(bridge)).some((n) => n.startsWith('fx__')));
    const go = async () => (await fetch(new URL('/go', bridge.mcpUrl), { method: 'POST' })).json();
    assert.equal((await go()).error.code, 'unknown_computer', 'the alias runs tool a (no computer linked)');

    // an alias on a path the bridge already serves: refused, nothing changes
    writeConfig({ tools: [tool('a'), tool('ab__x')], servers: [fixtureServer('fx')], endpoints: [{ path: '/go', tool: 'a' }, { path: '/health', tool: 'a' }] }, file);
    const clash = bridge.hub.reload();
    assert.equal(clash.ok, false);
    assert.equal(clash.problems[0].path, '$.endpoints[1].path');

    // the server and the alias removed, and a server "ab" added where the dropped Lua tool ab__x was
    writeConfig({ tools: [tool('a')], servers: [fixtureServer('ab')] }, file);
    const applied = bridge.hub.reload();
    assert.equal(applied.ok, true, JSON.stringify(applied));
    assert.deepEqual(applied.servers, { added: ['ab'], removed: ['fx'], changed: [] });
    const after = await names(bridge);
    assert.ok(!after.some((n) => n.startsWith('fx__')), after.join());
    assert.ok(!after.includes('ab__x'));
    assert.equal((await go()).error, 'not found', 'the removed alias no longer answers');
    await until(() => serverStatus(bridge, 'ab')?.state === 'up', 5, 20_000);
  });
});
