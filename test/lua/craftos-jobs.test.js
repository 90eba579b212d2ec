// On CraftOS-PC (a real CC runtime): returned tables with colliding keys keep every value
// (key-collisions); after a bridge restart the relinked computer's hello lists its detached jobs,
// so list-computers shows them without a job-status (relink-jobs); without http.websocketAsync (older CC)
// a job keeps getting its events while a reconnect hangs in the blocking http.websocket. Skipped with one line when
// CraftOS-PC is not on this machine.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
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
    const failed = (await callOk(ctx.bridge, 'exec-lua', { computerId: ID, code: 'error("it broke", 0)', detach: true })).structuredContent.job;
    const port = new URL(ctx.bridge.linkUrl).port;
    await ctx.bridge.close(100);
    ctx.bridge = await startBridge(bridgeConfig({ CC_LINK_PORT: port }));
    await until(() => ctx.bridge.links.get(ID), 20, 40000);
    const listed = await callOk(ctx.bridge, 'list-computers');
    const jobs = listed.structuredContent.computers[0].jobs;
    assert.ok(Array.isArray(jobs), `list-computers knows no jobs of the relinked computer: ${JSON.stringify(jobs)}`);
    assert.deepEqual(jobs.map((j) => [j.job, j.kind, j.state]), [
      [running, 'exec-lua', 'running'],
      [failed, 'exec-lua', 'failed'],
      [done, 'exec-lua', 'done'],
    ]);
    const status = (await callOk(ctx.bridge, 'job-status', { computerId: ID, job: failed })).structuredContent;
    assert.equal(status.error, 'it broke');
    await callOk(ctx.bridge, 'job-cancel', { computerId: ID, job: running });
    await until(async () => (await callTool(ctx.bridge, 'list-computers')).structuredContent.computers[0].jobs.every((j) => j.state !== 'running'), 50, 40000);
  });
});

describeCraftos('CraftOS-PC without http.websocketAsync (older CC): the ROM\'s blocking http.websocket', () => {
  const JOB_ID = 34;
  const ctx = useLinkedCraftos({ id: JOB_ID, pre: 'http.websocketAsync = nil\n' });

  test('bug: a detached job gets its timers while a reconnect hangs in the handshake (http.websocket threw them away, so the job stalled)', T, async (t) => {
    // the job waits for 100 timers of its own, one after the other (about 5 s), then writes a file
    const code = 'for i = 1, 100 do local id = os.startTimer(0.05) repeat local _, got = os.pullEvent("timer") until got == id end '
      + 'local f = fs.open("/ticked.txt", "w") f.write("100") f.close()';
    await callOk(ctx.bridge, 'exec-lua', { computerId: JOB_ID, code, detach: true });
    // The bridge goes; in its place a server that takes the connection and never answers the upgrade:
    // the reconnect's http.websocket waits in the handshake while the job's timers come.
    const port = Number(new URL(ctx.bridge.linkUrl).port);
    await ctx.bridge.close(100);
    ctx.bridge = null;
    const held = [];
    const server = net.createServer((socket) => held.push(socket));
    await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
    t.after(() => {
      for (const s of held) s.destroy();
      server.close();
    });
    await until(() => held.length > 0, 20, 40000);
    const ticked = path.join(ctx.pc.files, 'ticked.txt');
    await until(() => existsSync(ticked), 50, 30000);
    assert.equal(readFileSync(ticked, 'utf8'), '100');
  });
});
