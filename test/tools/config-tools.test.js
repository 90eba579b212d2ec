// Config-defined Lua tools over real MCP against fake computers: listing, targets, arguments sent
// as data beside the code, CC_EXEC_LUA=off, and config files the bridge refuses at startup.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigFileError } from '../../dist/config/file.js';
import { writeConfig } from '../config/write.js';
import { callTool, linkComputer, rpc, startTestBridge, withBridge } from '../helpers.js';


const RESULT = { output: '', returns: [{ type: 'boolean', value: true }], truncated: false };

const TOOLS = [
  {
    name: 'turtle-refuel',
    title: 'Refuel a turtle',
    description: 'Refuels miner-1',
    inputSchema: { type: 'object', properties: { count: { type: 'integer', minimum: 1 } }, required: ['count'], additionalProperties: false },
    target: { label: 'miner-1' },
    lua: 'local args = ...\nreturn turtle.refuel(args.count)',
    timeoutMs: 5000,
    annotations: { destructiveHint: false },
  },
  { name: 'door', description: 'Opens the door', target: { computerId: 4 }, lua: 'redstone.setOutput("left", true)' },
  { name: 'anywhere', target: 'argument', inputSchema: { type: 'object', properties: { side: { type: 'string' } } }, lua: 'local a = ...\nreturn a.side' },
];

test('config tools are listed beside the built-ins, with the target arguments added for "argument"', () =>
  withBridge({ CC_CONFIG: writeConfig({ tools: TOOLS }) }, async (bridge) => {
    const { json } = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const byName = Object.fromEntries(json.result.tools.map((t) => [t.name, t]));
    assert.ok(byName['exec-lua'] && byName['probe-computers']);
    assert.equal(byName['turtle-refuel'].title, 'Refuel a turtle');
    assert.equal(byName['turtle-refuel'].description, 'Refuels miner-1');
    assert.deepEqual(byName['turtle-refuel'].inputSchema, TOOLS[0].inputSchema);
    assert.equal(byName['turtle-refuel'].annotations.destructiveHint, false);
    assert.equal(byName.door.title, 'door');
    assert.deepEqual(Object.keys(byName.anywhere.inputSchema.properties), ['side', 'computerId', 'computer']);
    assert.deepEqual(byName.anywhere.outputSchema, byName['exec-lua'].outputSchema);
  }));

test('a call sends the fixed code with the validated arguments as data, to the configured computer', () =>
  withBridge({ CC_CONFIG: writeConfig({ tools: TOOLS }) }, async (bridge) => {
    const seen = [];
    const reply = (frame) => {
      seen.push(frame);
      return { ok: true, result: RESULT };
    };
    await linkComputer(bridge, { computerId: 1, computerLabel: 'miner-1', onRequest: reply });
    await linkComputer(bridge, { computerId: 4, computerLabel: 'door', onRequest: reply });
    const tricky = 'x]] .. os.shutdown() .. [[ "\n\0é';
    const refuel = await callTool(bridge, 'turtle-refuel', { count: 3 });
    assert.equal(refuel.isError, undefined);
    assert.equal(refuel.content[0].text, '=> true');
    assert.deepEqual(seen[0].params, { code: TOOLS[0].lua, args: { count: 3 } });
    await callTool(bridge, 'door');
    assert.deepEqual(seen[1].params, { code: TOOLS[1].lua, args: {} });
    await callTool(bridge, 'anywhere', { computer: 'door', side: tricky });
    assert.deepEqual(seen[2].params, { code: TOOLS[2].lua, args: { side: tricky } }, 'target arguments are not passed on');
    await callTool(bridge, 'anywhere', { computerId: 1 });
    assert.deepEqual(seen[3].params, { code: TOOLS[2].lua, args: {} });
    // arguments are validated against the tool's schema before anything is sent
    const bad = await callTool(bridge, 'turtle-refuel', { count: 0 });
    assert.equal(bad.isError, true);
    assert.match(bad.content[0].text, /count" must be at least 1/);
    assert.equal(seen.length, 4);
  }));

test('an absent target is an isError naming the computer and listing the linked ones', () =>
  withBridge({ CC_CONFIG: writeConfig({ tools: TOOLS }) }, async (bridge) => {
    await linkComputer(bridge, { computerId: 9, computerLabel: 'other' });
    const door = await callTool(bridge, 'door');
    assert.equal(door.isError, true);
    assert.equal(door.content[0].text, 'Computer 4 (the target of door) is not linked. Linked computers: 9 (Label: other).');
    const refuel = await callTool(bridge, 'turtle-refuel', { count: 1 });
    assert.match(refuel.content[0].text, /No linked computer has the label "miner-1"/);
    const anywhere = await callTool(bridge, 'anywhere', {});
    assert.match(anywhere.content[0].text, /Say which computer/);
    const both = await callTool(bridge, 'anywhere', { computerId: 9, computer: 'other' });
    assert.match(both.content[0].text, /not both/);
  }));

test('with CC_EXEC_LUA=off config tools still run (exec-lua does not); the timeout is the tool\'s', () =>
  withBridge({ CC_EXEC_LUA: 'off', CC_CONFIG: writeConfig({ tools: TOOLS }) }, async (bridge) => {
    await linkComputer(bridge, { computerId: 4, onRequest: () => ({ ok: true, result: RESULT }) });
    await linkComputer(bridge, { computerId: 1, computerLabel: 'miner-1', onRequest: () => null });
    assert.equal((await callTool(bridge, 'door')).isError, undefined);
    assert.equal((await callTool(bridge, 'exec-lua', { computerId: 4, code: 'return 1' })).isError, true);
    const { json } = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    assert.ok(json.result.tools.some((t) => t.name === 'door'));
    assert.ok(!json.result.tools.some((t) => t.name === 'exec-lua'));
  }));

test('a config tool times out after its own timeoutMs and sends cancel', () =>
  withBridge({ CC_CONFIG: writeConfig({ tools: [{ name: 'slow', target: { computerId: 2 }, lua: 'sleep(60)', timeoutMs: 50 }] }) }, async (bridge) => {
    const computer = await linkComputer(bridge, { computerId: 2, onRequest: () => null });
    const result = await callTool(bridge, 'slow');
    assert.equal(result.isError, true);
    assert.match(result.content[0].text, /timed out after 50 ms; cancel sent/);
    await computer.next((f) => f.type === 'cancel');
  }));

test('a bad file, or a config tool named like a built-in, stops startBridge with ConfigFileError', async () => {
  await assert.rejects(startTestBridge({ CC_CONFIG: writeConfig({ tool: [] }) }), (err) => {
    assert.ok(err instanceof ConfigFileError);
    assert.match(err.message, /bridge\.json: \$\.tool: unknown key/);
    return true;
  });
  await assert.rejects(startTestBridge({ CC_CONFIG: writeConfig({ tools: [{ name: 'exec-lua', target: 'argument', lua: 'return' }] }) }), (err) => {
    assert.equal(err.problems[0].path, '$.tools[0].name');
    assert.match(err.message, /tool name "exec-lua" is already taken by builtin/);
    return true;
  });
});
