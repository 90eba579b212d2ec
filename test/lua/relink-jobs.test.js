// A relinked computer's hello lists its detached jobs (relink-jobs). Before, a computer that relinked
// (bridge restart, link drop) with jobs running or finished-but-unread said nothing about them in its
// hello, so list-computers and GET /computers knew none until someone asked job-status. Now the hello
// carries [{job, kind, state, what}] (running first, then the newest finished; bounded to an eighth
// of the frame) and info frames keep the list current.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startBridge } from '../../dist/bridge.js';
import { loadConfig } from '../../dist/config.js';
import { until } from '../helpers.js';
import { useComputer } from './computer.js';
import { startFakeBridge } from './fake-bridge.js';
import { describeLua } from './lua-env.js';
import { bridgeFor, callOk, callTool, textOf } from './mcp-helpers.js';

const T = { timeout: 60000 };
const FOREVER = 'while true do sleep(1) end';

/** Starts a detached exec-lua under our own id on a fake-bridge link; resolves with its answer. */
async function detach(link, id, code) {
  link.send({ type: 'request', id, method: 'exec-lua', params: { code, detach: true } });
  const res = await link.waitFrame((f) => f.type === 'response' && f.id === id);
  assert.deepEqual(res, { type: 'response', id, ok: true, result: { job: id, state: 'running' } });
}

describeLua('relink-jobs: a relinked computer\'s hello lists its jobs', () => {
  test('the hello after a link drop lists running, done, failed and cancelled jobs; no job-status was asked', T, async (t) => {
    const bridge = await startFakeBridge();
    t.after(() => bridge.close());
    const c = useComputer(t, { id: 9, url: bridge.url, timeScale: 0.01 });
    await c.waitForOutput(/waiting\s+for\s+requests/);
    const first = await bridge.link(0);
    assert.deepEqual((await first.hello).jobs, [], 'no jobs yet: an empty list');
    await detach(first, 'run-1', FOREVER);
    await detach(first, 'done-2', 'return 1');
    await detach(first, 'fail-3', 'error("boom", 0)');
    await detach(first, 'cancel-4', FOREVER);
    await detach(first, 'x'.repeat(129), 'return 2'); // longer than the bridge's ids: left out
    const cancelled = await first.request('job-cancel', { job: 'cancel-4' });
    assert.equal(cancelled.result.state, 'cancelled');

    first.close(1000, 'test drops the link');
    const second = await bridge.link(1, 30000);
    const hello = await second.hello;
    assert.deepEqual(hello.jobs, [
      { job: 'run-1', kind: 'exec-lua', state: 'running', what: FOREVER },
      { job: 'cancel-4', kind: 'exec-lua', state: 'cancelled', what: FOREVER },
      { job: 'fail-3', kind: 'exec-lua', state: 'failed', what: 'error("boom", 0)' },
      { job: 'done-2', kind: 'exec-lua', state: 'done', what: 'return 1' },
    ]);
    assert.ok(!second.frames.some((f) => f.type === 'response'), 'nothing was asked on the new link');
  });

  test('the hello\'s job list is bounded: an eighth of a small --max-frame, running jobs first', T, async (t) => {
    const bridge = await startFakeBridge();
    t.after(() => bridge.close());
    const c = useComputer(t, { id: 9, url: bridge.url, timeScale: 0.01, args: ['--max-frame', '4096'] });
    await c.waitForOutput(/waiting\s+for\s+requests/);
    const first = await bridge.link(0);
    for (let i = 1; i <= 15; i++) await detach(first, `done-${i}`, `return ${i}`);
    await detach(first, 'run-16', FOREVER);
    first.close(1000, 'test drops the link');
    const second = await bridge.link(1, 30000);
    const hello = await second.hello;
    const budget = Math.floor((4096 - 512) / 8);
    assert.ok(JSON.stringify(hello.jobs).length <= budget, `${JSON.stringify(hello.jobs).length} bytes`);
    assert.ok(hello.jobs.length >= 3 && hello.jobs.length < 16, `${hello.jobs.length} jobs listed`);
    assert.deepEqual(hello.jobs.map((j) => j.job), ['run-16', ...Array.from({ length: hello.jobs.length - 1 }, (_, i) => `done-${15 - i}`)]);
    assert.ok(second.raw[0].length <= 4096);
  });

  test('bridge restart: list-computers and GET /computers show the jobs at once, and info frames keep their states current', T, async (t) => {
    const first = await startBridge(loadConfig({ MCP_PORT: '0', CC_LINK_PORT: '0', LOG_LEVEL: 'error' }));
    const port = new URL(first.linkUrl).port;
    const files = { 'forever.lua': 'while true do sleep(1) end\n' };
    const c = useComputer(t, { id: 4, url: first.linkUrl, timeScale: 0.01, files });
    await c.waitForOutput('waiting for requests');
    const running = (await callOk(first, 'run-program', { computerId: 4, command: 'forever', detach: true })).structuredContent.job;
    const done = (await callOk(first, 'exec-lua', { computerId: 4, code: 'return "ok"', detach: true })).structuredContent.job;
    const mark = c.output.length;
    await first.close(100);
    await c.waitForOutput('the bridge is shutting down', 10000, mark);

    const second = await bridgeFor(t, { CC_LINK_PORT: port });
    await c.waitForOutput('waiting for requests', 30000, mark);
    await until(() => second.links.get(4));
    const listed = await callOk(second, 'list-computers');
    assert.deepEqual(listed.structuredContent.computers[0].jobs, [
      { job: running, kind: 'run-program', state: 'running', what: 'forever' },
      { job: done, kind: 'exec-lua', state: 'done', what: 'return "ok"' },
    ]);
    assert.match(textOf(listed), new RegExp(`; jobs: ${running} running \\(run-program: forever\\), ${done} done \\(exec-lua: return "ok"\\); connected `));
    const rest = await (await fetch(second.mcpUrl.replace(/\/mcp$/, '/computers'))).json();
    assert.deepEqual(rest[0].jobs, listed.structuredContent.computers[0].jobs);

    // A state change reaches the bridge as an info frame (no job-status needed to see it).
    await callOk(second, 'job-cancel', { computerId: 4, job: running });
    await until(async () => (await callTool(second, 'list-computers')).structuredContent.computers[0].jobs.every((j) => j.state !== 'running'));
    const after = (await callOk(second, 'list-computers')).structuredContent.computers[0].jobs;
    assert.deepEqual(after.map((j) => [j.job, j.state]), [[done, 'done'], [running, 'cancelled']], 'no job running: the newest finished first');
  });
});
