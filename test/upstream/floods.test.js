// A hostile stdio upstream (test/fixtures/flooding-upstream.js) floods the bridge with notifications,
// requests of its own, stderr lines or lines that are not JSON: the bridge's memory and log stay
// bounded and its calls keep working. Real child processes from CC_CONFIG, MCP over real HTTP.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { writeConfig } from '../config/write.js';
import { callTool, until, withBridge } from '../helpers.js';

const FLOODING = fileURLToPath(new URL('../fixtures/flooding-upstream.js', import.meta.url));
const flooding = (id, ...args) => ({ id, command: process.execPath, args: [FLOODING, ...args] });
const health = async (bridge) => (await (await fetch(new URL('/health', bridge.mcpUrl))).json());
const up = (bridge, id) => until(async () => (await health(bridge)).servers.find((s) => s.id === id && s.state === 'up'));

test('bug: tools/list_changed notices that came while a re-listing was under way each added a handler to its promise, without bound, each logging the same failure', { timeout: 60_000 }, () =>
  withBridge({ CC_CONFIG: writeConfig({ servers: [flooding('fl', 'relist-flood', '5000')] }), LOG_LEVEL: 'info' }, async (bridge) => {
    await up(bridge, 'fl');
    // the re-listing fails after the server has sent 5,000 more notices
    await until(() => bridge.logs.some((l) => l.includes('fl: re-listing tools failed')));
    // the failure is handled once: before, once per notice (5,000 lines, and 5,000 handlers held)
    await new Promise((resolve) => setTimeout(resolve, 200));
    const failures = bridge.logs.filter((l) => l.includes('fl: re-listing tools failed'));
    assert.equal(failures.length, 1, `${failures.length} lines: ${failures[0]}`);
    assert.match(failures[0], /re-listing tools failed: tools\/list failed: listing failed on purpose \(-32603\); keeping the previous list/);
    // the previous list is kept and works
    const result = await callTool(bridge, 'fl__echo', { a: 1 });
    assert.equal(result.content[0].text, '{"a":1}');
  }));
