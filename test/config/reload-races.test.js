// A config reload racing other things: here the bridge shutting down while a server the reload
// retired still finishes a call in flight. Ordered on the bridge's own state (calls in flight,
// server status), never on time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeConfig } from './write.js';
import { fixtureServer } from '../upstream/fixture.js';
import { processAlive, rpc, session, startTestBridge, until } from '../helpers.js';

test('bug: a bridge shutting down while a server removed by a reload still served a call in flight left that call waiting: its caller got no answer, only its connection cut at the end of the shutdown grace; now it is answered "the bridge is shutting down" at once and the server process ends', { timeout: 90_000 }, async (t) => {
  const file = writeConfig({ servers: [fixtureServer('fx')] });
  const bridge = await startTestBridge({ CC_CONFIG: file });
  let closed = false;
  t.after(() => (closed ? undefined : bridge.close()));
  await until(() => bridge.hub.serverStatus()[0]?.state === 'up');
  const pid = Number(/fixture started pid=(\d+)/.exec(bridge.logs.find((l) => /upstream fx stderr: fixture started/.test(l)))[1]);
  const s = await session(bridge.mcpUrl);
  const pending = rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 'in-flight', method: 'tools/call', params: { name: 'fx__slow' } }, s).catch((err) => ({ failed: String(err.cause ?? err) }));
  await until(() => bridge.dispatcher.activeCalls === 1);
  // the reload retires fx: it keeps serving its call in flight (for up to its upstream timeout)
  writeConfig({ servers: [] }, file);
  assert.deepEqual(bridge.hub.reload().servers, { added: [], removed: ['fx'], changed: [] });
  assert.equal(bridge.dispatcher.activeCalls, 1);
  // a shutdown grace long enough that the call is cut only if nothing answers it: the old build
  // answered nothing and closed the connection after these 20 s
  const closing = bridge.close(20_000).then(() => (closed = true));
  const res = await pending;
  assert.equal(res.failed, undefined, `the call got no answer: ${res.failed}`);
  assert.equal(res.json.result.isError, true);
  assert.match(res.json.result.content[0].text, /upstream server "fx" went down during the call: .*the bridge is shutting down/);
  await closing;
  assert.equal(processAlive(pid), false, `the retired server's process ${pid} still runs after the bridge closed`);
});
