// A 2025 session's GET /mcp stream opened after a tool change that reached no stream of it. First a
// session resumed after a real restart (MCP_SESSION_KEY_FILE keeps its id valid) whose tool
// set changed while the bridge was down. The bug: the change was told to nobody (no stream was open
// while the bridge was down, and the restarted bridge sends a notice only for changes it makes), so
// a client that resumed with its Mcp-Session-Id kept its cached tools/list: a tool added between
// the runs stayed unknown to it. Now a session an earlier start issued gets
// notifications/tools/list_changed as the first event of a stream it opens while holding none.
// "Nothing was sent at open" is read deterministically: the stream's first keep-alive comment comes
// after anything written when it opened (one socket, in order), so no test waits on a clock.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { rpc, until, withBridge } from '../helpers.js';
import { writeConfig } from '../config/write.js';
import { LIST_CHANGED, VERSION, initialize, luaTool, openStream, startProcess, stop, tempDir } from './bridge-process.js';

/** The events a stream got before its first keep-alive comment after `mark` bytes of its body. */
async function eventsAtOpen(stream, mark = 0) {
  await until(() => stream.body.indexOf(': keep-alive', mark) >= 0);
  const head = stream.body.slice(0, stream.body.indexOf(': keep-alive', mark));
  return [...head.matchAll(/^data: (.*)$/gm)].map(([, data]) => JSON.parse(data));
}

const toolNames = async (url, id) => {
  const list = await rpc(url, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { 'mcp-protocol-version': VERSION, 'mcp-session-id': id });
  assert.equal(list.status, 200, list.text);
  return list.json.result.tools.map((tool) => tool.name);
};

const openStreams = async (url) => Number(/^cc_mcp_get_streams (\d+)$/m.exec(await (await fetch(new URL('/metrics', url))).text())[1]);

test('bug: a tool added while the bridge was down was never announced to a 2025 session resumed after the restart; its first GET /mcp stream now starts with notifications/tools/list_changed (real restart, CC_CONFIG tool added between runs)', async (t) => {
  const space = tempDir(t);
  const config = join(space.dir, 'bridge.json');
  writeFileSync(config, JSON.stringify({ tools: [luaTool('one')] }));
  const env = { MCP_SESSION_KEY_FILE: join(space.dir, 'session.key'), CC_CONFIG: config, MCP_LISTEN_KEEPALIVE_MS: '50' };

  const first = await startProcess(space, env);
  const id = await initialize(first.mcpUrl);
  assert.ok(!(await toolNames(first.mcpUrl, id)).includes('two'));
  // a session of this start: its stream starts with nothing (its client just listed the tools)
  const own = await openStream(first.mcpUrl, id);
  assert.equal(own.status, 200);
  assert.deepEqual(await eventsAtOpen(own), []);
  own.close();
  await stop(first);

  // the operator adds a tool while the bridge is down
  writeFileSync(config, JSON.stringify({ tools: [luaTool('one'), luaTool('two')] }));
  const second = await startProcess(space, env);
  const resumed = await openStream(second.mcpUrl, id);
  assert.equal(resumed.status, 200, resumed.body);
  assert.deepEqual(await eventsAtOpen(resumed), [LIST_CHANGED], 'the resumed session is told its tool list may be stale');
  assert.ok((await toolNames(second.mcpUrl, id)).includes('two'), 'and the list it fetches then has the new tool');

  // another stream of the same session while it holds one: no second notice
  const spare = await openStream(second.mcpUrl, id);
  assert.deepEqual(await eventsAtOpen(spare), []);
  // a session of this start: none either
  const fresh = await initialize(second.mcpUrl);
  const freshStream = await openStream(second.mcpUrl, fresh);
  assert.deepEqual(await eventsAtOpen(freshStream), []);
  // a change now goes once to each session's newest stream, as before
  writeFileSync(config, JSON.stringify({ tools: [luaTool('one'), luaTool('two'), luaTool('three')] }));
  assert.equal((await fetch(new URL('/reload', second.mcpUrl), { method: 'POST' })).status, 200);
  await until(() => spare.events.length === 1 && freshStream.events.length === 1);
  assert.deepEqual([spare.events[0].json, freshStream.events[0].json], [LIST_CHANGED, LIST_CHANGED]);

  // once the resumed session holds no stream here, the next one it opens starts with the notice again
  // (the bridge keeps nothing of a session without streams; a spare notice costs the client one tools/list)
  for (const stream of [resumed, spare, freshStream]) stream.close();
  await until(async () => (await openStreams(second.mcpUrl)) === 0);
  const again = await openStream(second.mcpUrl, id);
  assert.deepEqual(await eventsAtOpen(again), [LIST_CHANGED]);
  again.close();
  await stop(second);
});

test('bug: a tool change made while a 2025 session had no GET /mcp stream (between its initialize and its first stream, or between a dropped stream and the reconnect) was never announced to it; the stream it opens then starts with notifications/tools/list_changed', async () => {
  const config = writeConfig({ tools: [luaTool('one')] });
  await withBridge({ CC_CONFIG: config, MCP_LISTEN_KEEPALIVE_MS: '50' }, async (bridge) => {
    const url = bridge.mcpUrl;
    const reload = async (names) => {
      writeConfig({ tools: names.map(luaTool) }, config);
      assert.equal((await fetch(new URL('/reload', url), { method: 'POST' })).status, 200);
    };
    // no change since initialize: nothing at open
    const quiet = await initialize(url);
    const quietStream = await openStream(url, quiet);
    assert.deepEqual(await eventsAtOpen(quietStream), []);
    quietStream.close();

    // the client initialized and listed the tools; a tool is added before its GET stream opens
    const id = await initialize(url);
    assert.ok(!(await toolNames(url, id)).includes('two'));
    await reload(['one', 'two']);
    const first = await openStream(url, id);
    assert.deepEqual(await eventsAtOpen(first), [LIST_CHANGED]);
    assert.ok((await toolNames(url, id)).includes('two'));

    // its stream drops; a change comes before it reconnects
    first.close();
    await until(async () => (await openStreams(url)) === 0);
    await reload(['one', 'two', 'three']);
    const reconnected = await openStream(url, id);
    assert.deepEqual(await eventsAtOpen(reconnected), [LIST_CHANGED]);
    // a second stream while it holds one: nothing at open; the next change goes to the newest, once
    const second = await openStream(url, id);
    assert.deepEqual(await eventsAtOpen(second), []);
    await reload(['one']);
    await until(() => second.events.length === 1);
    assert.deepEqual(second.events[0].json, LIST_CHANGED);
    for (const stream of [reconnected, second]) stream.close();
  });
});
