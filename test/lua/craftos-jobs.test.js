// On CraftOS-PC (a real CC runtime): returned tables with colliding keys keep every value
// (key-collisions); after a bridge restart the relinked computer's hello lists its detached jobs,
// so list-computers shows them without a job-status (relink-jobs). Skipped with one line when
// CraftOS-PC is not on this machine.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startBridge } from '../../dist/bridge.js';
import { bridgeConfig, describeCraftos, useLinkedCraftos } from './craftos.js';
import { until } from '../helpers.js';
import { callOk, callTool } from './mcp-helpers.js';
import { COLLIDING_CODE, checkColliding } from './collisions.js';

const T = { timeout: 60000 };
const ID = 33;

describeCraftos('CraftOS-PC: colliding keys, jobs after a relink', () => {
  const ctx = useLinkedCraftos({ id: ID });

  test('three and more keys with the same JSON text each keep their value (key-collisions)', T, async () => {
    const sc = (await callTool(ctx.bridge, 'exec-lua', { computerId: ID, code: COLLIDING_CODE })).structuredContent;
    assert.equal(sc.ok, true, JSON.stringify(sc).slice(0, 300));
    assert.equal(sc.truncated, false);
    checkColliding(sc.returns);
  });

  test('a bridge restart: the relinked computer\'s hello lists its running and finished jobs (relink-jobs)', T, async () => {
    const running = (await callOk(ctx.bridge, 'exec-lua', { computerId: ID, code: 'while true do sleep(0.5) end', detach: true })).structuredContent.job;
    const done = (await callOk(ctx.bridge, 'exec-lua', { computerId: ID, code: 'return 42', detach: true })).structuredContent.job;
    const failed = (await callOk(ctx.bridge, 'run-program', { computerId: ID, command: 'no-such-program', detach: true })).structuredContent.job;
    const port = new URL(ctx.bridge.linkUrl).port;
    await ctx.bridge.close(100);
    ctx.bridge = await startBridge(bridgeConfig({ CC_LINK_PORT: port }));
    await until(() => ctx.bridge.links.get(ID), 20, 40000);
    const listed = await callOk(ctx.bridge, 'list-computers');
    const jobs = listed.structuredContent.computers[0].jobs;
    assert.ok(Array.isArray(jobs), `list-computers knows no jobs of the relinked computer: ${JSON.stringify(jobs)}`);
    assert.deepEqual(jobs.map((j) => [j.job, j.kind, j.state]), [
      [running, 'exec-lua', 'running'],
      [failed, 'run-program', 'failed'],
      [done, 'exec-lua', 'done'],
    ]);
    // run-program-missing: the missing program is named, not a "done" job whose result says false
    const status = (await callOk(ctx.bridge, 'job-status', { computerId: ID, job: failed })).structuredContent;
    assert.equal(status.error, 'No such program: no-such-program');
    await callOk(ctx.bridge, 'job-cancel', { computerId: ID, job: running });
    await until(async () => (await callTool(ctx.bridge, 'list-computers')).structuredContent.computers[0].jobs.every((j) => j.state !== 'running'), 50, 40000);
  });
});
