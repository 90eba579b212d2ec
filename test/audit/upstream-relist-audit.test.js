// An upstream server may send notifications/tools/list_changed as often as it likes (some send it
// after every call). The bridge re-lists then; only a listing that differs is a change of the tool
// set: one announced to every MCP client (GET /mcp streams, --stdio hosts, subscriptions), each of
// which lists the tools again, and counted in the session ids' generation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeConfig } from '../config/write.js';
import { fixtureServer } from '../upstream/fixture.js';
import { callTool, until, withBridge } from '../helpers.js';

test('bug: an upstream\'s list_changed followed by the same listing counted as a tool set change (every client told, the generation moved); now an unchanged listing keeps its tools', { timeout: 60_000 }, async () => {
  await withBridge({ CC_CONFIG: writeConfig({ servers: [fixtureServer('fx')] }) }, async (bridge) => {
    await until(() => bridge.tools.list().some((t) => t.name === 'fx__change'));
    const relisted = () => bridge.logs.filter((l) => / upstream fx re-listed its tools: /.test(l)).length;
    // the first change adds a tool: a change
    const before = bridge.tools.generation;
    assert.equal((await callTool(bridge, 'fx__change')).content[0].text, 'changed');
    await until(() => relisted() === 1);
    assert.ok(bridge.tools.list().some((t) => t.name === 'fx__added'));
    assert.equal(bridge.tools.generation, before + 1);
    const tools = bridge.tools.list();
    // the second says list_changed again with the same list: no change
    await callTool(bridge, 'fx__change');
    await until(() => relisted() === 2);
    assert.equal(bridge.tools.generation, before + 1);
    assert.deepEqual(bridge.tools.list(), tools);
    assert.ok(bridge.tools.list().every((t, i) => t === tools[i]), 'the same tool objects');
    assert.match(bridge.logs.filter((l) => / upstream fx re-listed its tools: /.test(l))[1], /re-listed its tools: \d+, unchanged$/);
  });
});
