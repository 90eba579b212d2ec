// Upstream servers that misbehave: malformed answers to a call, garbage instead of a handshake,
// a server that hides behind a wrapper process (as npx does). Each one is answered with a clear,
// specific error for that call or that server alone; the bridge and the other calls carry on, and
// no process is left behind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { once } from 'node:events';
import { writeConfig } from '../config/write.js';
import { FIXTURE, fixtureServer } from './fixture.js';
import { callTool, processAlive, until, withBridge } from '../helpers.js';

const health = async (bridge) => (await (await fetch(new URL('/health', bridge.mcpUrl))).json());
const status = (bridge, id) => health(bridge).then((h) => h.servers.find((s) => s.id === id));

const pidsOf = (bridge, id) =>
  bridge.logs.map((l) => new RegExp(`upstream ${id} stderr: fixture started pid=(\\d+)`).exec(l)).filter(Boolean).map((m) => Number(m[1]));

test('malformed answers to a call fail that call at once, naming what was wrong; the server stays up', () =>
  withBridge({ CC_CONFIG: writeConfig({ servers: [fixtureServer('fx', '--bad-answers')] }) }, async (bridge) => {
    await until(async () => (await status(bridge, 'fx'))?.state === 'up');
    const content = await callTool(bridge, 'fx__bad-content');
    assert.deepEqual(content, {
      isError: true,
      content: [{ type: 'text', text: 'upstream server "fx" sent a malformed answer: tools/call of bad-content: the result\'s content must be an array, got a string' }],
    });
    const block = await callTool(bridge, 'fx__bad-block');
    assert.equal(block.isError, true);
    assert.equal(block.content[0].text, 'upstream server "fx" sent a malformed answer: tools/call of bad-block: the result\'s content[1] has no "type"');
    // a response with the call's id but neither result nor error: not left to the timeout
    const shape = await callTool(bridge, 'fx__bad-shape');
    assert.equal(shape.isError, true);
    assert.match(shape.content[0].text, /^upstream server "fx" sent a malformed answer: tools\/call: the answer is not JSON-RPC \(not a request, notification or response\)$/);
    assert.deepEqual(await status(bridge, 'fx'), { id: 'fx', transport: 'stdio', state: 'up', tools: 11, restarts: 0 });
    assert.deepEqual((await callTool(bridge, 'fx__echo', { a: 1 })).structuredContent, { args: { a: 1 } });
  }));

test('a server that answers the handshake with garbage is down when initialize times out, and its process is gone', () =>
  withBridge({ CC_CONFIG: writeConfig({ servers: [{ ...fixtureServer('mute', '--mute'), timeoutMs: 200 }] }) }, async (bridge) => {
    const down = await until(async () => {
      const s = await status(bridge, 'mute');
      return s?.state === 'down' && s;
    });
    assert.equal(down.reason, 'initialize timed out after 200 ms');
    assert.ok(bridge.logs.some((l) => / warn upstream mute wrote a line that is not JSON; ignored: garbage for \d+ bytes/.test(l)));
    const call = await callTool(bridge, 'mute__anything');
    assert.equal(call.isError, true);
    assert.match(call.content[0].text, /^upstream server "mute" (is down: initialize timed out after 200 ms|is starting; try again shortly)$/);
    // the first process was ended before the restart
    const first = pidsOf(bridge, 'mute')[0];
    await until(() => !processAlive(first));
  }));

test('a server behind a wrapper process (sh -c, like npx): closing the bridge leaves no grandchild', () => {
  // sh stays as the parent (the fixture is not its last command), and the fixture ignores stdin EOF and SIGTERM
  const script = `"${process.execPath}" "${FIXTURE}" --ignore-eof; echo wrapper done >&2`;
  const config = writeConfig({ servers: [{ id: 'wrapped', command: '/bin/sh', args: ['-c', script] }] });
  let pid;
  return withBridge({ CC_CONFIG: config }, async (bridge) => {
    await until(async () => (await status(bridge, 'wrapped'))?.state === 'up');
    [pid] = pidsOf(bridge, 'wrapped');
    assert.ok(pid && processAlive(pid));
    await bridge.close();
    // the grandchild went with its process group (a survivor fails the test when until gives up)
    await until(() => !processAlive(pid));
  });
});

/** A small Streamable HTTP MCP server whose tools/call misbehaves as `behave[name]` says. */
async function httpServer(behave) {
  const srv = createServer(async (req, res) => {
    if (req.method !== 'POST') return res.writeHead(405).end();
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const msg = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    if (msg.id === undefined) return res.writeHead(202).end();
    const answer = (result) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
    };
    if (msg.method === 'initialize') return answer({ protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'odd', version: '1' } });
    if (msg.method === 'tools/list') return answer({ tools: Object.keys(behave).map((name) => ({ name, inputSchema: { type: 'object' } })) });
    return behave[msg.params.name](res, answer);
  });
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  return { url: `http://127.0.0.1:${srv.address().port}/mcp`, close: () => (srv.closeAllConnections(), new Promise((r) => srv.close(r))) };
}

test('an HTTP upstream whose connection dies mid-call, or that answers HTML: that call fails saying so, the next one works', async (t) => {
  const srv = await httpServer({
    // the answer stream starts, then the connection is cut
    cut: (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': working\n\n');
      setTimeout(() => res.socket.destroy(), 20);
    },
    html: (res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>oops</html>');
    },
    ok: (res, answer) => answer({ content: [{ type: 'text', text: 'fine' }] }),
  });
  t.after(() => srv.close());
  await withBridge({ CC_CONFIG: writeConfig({ servers: [{ id: 'odd', url: srv.url }] }) }, async (bridge) => {
    await until(async () => (await status(bridge, 'odd'))?.state === 'up');
    const cut = await callTool(bridge, 'odd__cut');
    assert.equal(cut.isError, true);
    assert.match(cut.content[0].text, /^upstream server "odd" failed on odd__cut: tools\/call was not answered: the connection closed before the whole answer arrived /);
    const html = await callTool(bridge, 'odd__html');
    assert.equal(html.isError, true);
    assert.equal(html.content[0].text, 'upstream server "odd" failed on odd__html: tools/call did not get through: the answer is not JSON (content-type text/html)');
    assert.equal((await status(bridge, 'odd')).state, 'up');
    assert.deepEqual(await callTool(bridge, 'odd__ok'), { content: [{ type: 'text', text: 'fine' }] });
  });
});
