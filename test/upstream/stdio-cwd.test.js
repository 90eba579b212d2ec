// A stdio upstream server's configured cwd is where its process starts (found by mutation testing:
// dropping it passed every test): the fixture named by a path relative to that cwd comes up.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { writeConfig } from '../config/write.js';
import { FIXTURE } from './fixture.js';
import { until, withBridge } from '../helpers.js';

const status = async (bridge, id) => (await (await fetch(new URL('/health', bridge.mcpUrl))).json()).servers.find((s) => s.id === id);

test('a stdio upstream server starts in its configured cwd', () => {
  const config = writeConfig({ servers: [{ id: 'here', command: process.execPath, args: [path.basename(FIXTURE)], cwd: path.dirname(FIXTURE) }] });
  return withBridge({ CC_CONFIG: config }, async (bridge) => {
    await until(async () => (await status(bridge, 'here'))?.state === 'up');
    const listed = await fetch(new URL('/tools', bridge.mcpUrl)).then((r) => r.json());
    assert.ok(JSON.stringify(listed).includes('here__'), 'its tools are offered');
  });
});
