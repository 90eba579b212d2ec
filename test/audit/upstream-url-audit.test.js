// Audit: an upstream server's URL in CC_CONFIG may carry its key in the query (hosted MCP servers often
// take `?api_key=...`); `cannot reach <url>` put it whole into the log, /health's server reason (what
// `cc-mcp health` and any token holder read) and the errors of calls a model reads. A URL with a user
// and password never worked (fetch refuses it on every request) and its error quoted the password.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { once } from 'node:events';
import { writeConfig } from '../config/write.js';
import { startTestBridge, until, withBridge } from '../helpers.js';

async function closedPort() {
  const server = net.createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address();
  server.close();
  await once(server, 'close');
  return port;
}

test('bug: an upstream URL\'s query key (?api_key=...) was shown whole in the log and /health when the server could not be reached; now its values are ***', { timeout: 60_000 }, async () => {
  const port = await closedPort();
  const file = writeConfig({ servers: [{ id: 'far', url: `http://127.0.0.1:${port}/mcp?api_key=SECRET123&region=eu` }] });
  await withBridge({ CC_CONFIG: file }, async (bridge) => {
    const far = await until(async () => (await (await fetch(new URL('/health', bridge.mcpUrl))).json()).servers.find((s) => s.id === 'far' && s.state === 'down'));
    assert.match(far.reason, new RegExp(`cannot reach http://127\\.0\\.0\\.1:${port}/mcp\\?api_key=\\*\\*\\*&region=\\*\\*\\*`));
    await until(() => bridge.logs.some((l) => /upstream far is down/.test(l)));
    assert.ok(!JSON.stringify(far).includes('SECRET123'));
    assert.deepEqual(bridge.logs.filter((l) => l.includes('SECRET123')), []);
  });
});

test('bug: an upstream URL with a user and password was taken (fetch then refused it on every try, quoting the password in the log and /health); now a config error', async () => {
  const file = writeConfig({ servers: [{ id: 'far', url: 'http://bob:hunter2@127.0.0.1:1/mcp' }] });
  await assert.rejects(startTestBridge({ CC_CONFIG: file }), (err) => err.code === 'ERR_CONFIG_FILE' && /\$\.servers\[0\]\.url: must not hold a user or password/.test(err.message) && !err.message.includes('hunter2'));
});

test('shownUrl hides what may be secret and keeps where it goes', async () => {
  const { shownUrl } = await import('../../dist/upstream/http.js');
  assert.equal(shownUrl('https://api.example.com/v1/mcp?key=abc&x=1#f'), 'https://api.example.com/v1/mcp?key=***&x=***');
  assert.equal(shownUrl('http://u:p@h:8080/mcp'), 'http://h:8080/mcp');
  assert.equal(shownUrl('http://h/mcp'), 'http://h/mcp');
  assert.equal(shownUrl('http://h/mcp?'), 'http://h/mcp');
  assert.equal(shownUrl('not a url'), '(an invalid URL)');
});
