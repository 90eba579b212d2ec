// A hostile stdio upstream (test/fixtures/flooding-upstream.js) floods the bridge with notifications,
// requests of its own, stderr lines or lines that are not JSON: the bridge's memory and log stay
// bounded and its calls keep working. Real child processes from CC_CONFIG, MCP over real HTTP.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { createServer } from 'node:http';
import { once } from 'node:events';
import { writeConfig } from '../config/write.js';
import { callTool, until, withBridge } from '../helpers.js';

const FLOODING = fileURLToPath(new URL('../fixtures/flooding-upstream.js', import.meta.url));
const flooding = (id, ...args) => ({ id, command: process.execPath, args: [FLOODING, ...args] });
const health = async (bridge) => (await (await fetch(new URL('/health', bridge.mcpUrl))).json());
const up = (bridge, id) => until(async () => (await health(bridge)).servers.find((s) => s.id === id && s.state === 'up'));

test('bug: tools/list_changed notices that came while a re-listing was under way each added a handler to its promise, without bound, each logging the same failure', { timeout: 60_000 }, () =>
  withBridge({ CC_CONFIG: writeConfig({ servers: [flooding('fl', 'relist-flood', '5000')] }), LOG_LEVEL: 'info' }, async (bridge) => {
    await up(bridge, 'fl');
    // the call makes the server say its tools changed; the re-listing fails after 5,000 more notices
    assert.equal((await callTool(bridge, 'fl__echo', { a: 0 })).content[0].text, '{"a":0}');
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

test('bug: a stdio upstream that stopped reading its stdin and sent requests of its own had every answer to them kept in the bridge, without bound', { timeout: 60_000 }, () =>
  withBridge({ CC_CONFIG: writeConfig({ servers: [flooding('rq', 'requests', '100000')] }), LOG_LEVEL: 'info' }, async (bridge) => {
    await up(bridge, 'rq');
    // the child has written all 100,000 requests (and the bridge has read them: its stderr comes after)
    await until(() => bridge.logs.some((l) => l.includes('upstream rq stderr: sent 100000 requests')));
    await until(() => bridge.logs.some((l) => l.includes('upstream rq sends requests of its own faster than it takes the answers')));
    const said = bridge.logs.filter((l) => l.includes('faster than it takes the answers'));
    assert.equal(said.length, 1);
    assert.match(said[0], /warn upstream rq sends requests of its own faster than it takes the answers: 64 answers are still being sent to it; its requests past that are not answered \(said once per connection\)/);
    assert.equal((await health(bridge)).servers.find((s) => s.id === 'rq').state, 'up');
  }));

test('bug: an HTTP upstream that sent requests of its own on an event stream and never answered the POSTs carrying the answers had one POST open per request, without bound', { timeout: 60_000 }, async (t) => {
  const held = [];
  const upstream = createServer(async (req, res) => {
    if (req.method !== 'POST') return res.writeHead(405).end();
    let text = '';
    for await (const chunk of req) text += chunk;
    const msg = JSON.parse(text);
    const json = (body) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, ...body }));
    // an answer to one of its own requests: never answered
    if (msg.method === undefined) return void held.push(res);
    if (msg.id === undefined) return res.writeHead(202).end();
    if (msg.method === 'initialize') return json({ result: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'asks', version: '1' } } });
    if (msg.method === 'tools/list') return json({ result: { tools: [{ name: 'ask', inputSchema: { type: 'object' } }] } });
    // tools/call: 300 requests of its own on the call's event stream, then the call's answer
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (let i = 0; i < 300; i++) res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', id: `s${i}`, method: 'elicitation/create', params: { message: 'hi', requestedSchema: { type: 'object' } } })}\n\n`);
    res.end(`data: ${JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: { content: [{ type: 'text', text: 'asked' }] } })}\n\n`);
  });
  upstream.listen(0, '127.0.0.1');
  await once(upstream, 'listening');
  t.after(() => new Promise((resolve) => {
    upstream.closeAllConnections();
    upstream.close(resolve);
  }));
  const config = writeConfig({ servers: [{ id: 'asks', url: `http://127.0.0.1:${upstream.address().port}/mcp` }] });
  await withBridge({ CC_CONFIG: config, LOG_LEVEL: 'info' }, async (bridge) => {
    await up(bridge, 'asks');
    const result = await callTool(bridge, 'asks__ask', {});
    assert.equal(result.content[0].text, 'asked');
    // the answers' POSTs reach the server (each is read whole before it is held)
    await until(() => held.length >= 64);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(held.length, 64, `${held.length} POSTs of answers open at once`);
    await until(() => bridge.logs.some((l) => l.includes('upstream asks sends requests of its own faster than it takes the answers')));
  });
});

test('bug: every stderr line and every stdout line that is not JSON of an upstream went to the log, whole and without bound', { timeout: 90_000 }, async () => {
  // one bridge each: reading the lines that are not JSON keeps the bridge busy, which would bring
  // the stderr server's late lines in the same read (and the same second of the budget) as its flood
  await withBridge({ CC_CONFIG: writeConfig({ servers: [flooding('se', 'stderr', '20000')] }), LOG_LEVEL: 'info' }, async (bridge) => {
    await up(bridge, 'se');
    await until(() => bridge.logs.some((l) => l.includes('upstream se stderr: done')));
    // at most 50 lines a second per server and level: 20,000 lines come in a few seconds at most
    const spam = bridge.logs.filter((l) => l.includes('upstream se stderr: spam'));
    assert.ok(spam.length > 0 && spam.length <= 500, `${spam.length} stderr lines logged of 20,000`);
    // the next line that is logged says how many were left out; a long stderr line is shown cut, with its length
    const long = bridge.logs.find((l) => l.includes('upstream se stderr: y'));
    assert.match(long, /stderr: y{2048}\.\.\. \(100000 characters\) \(\d+ similar lines? suppressed\)$/);
    assert.ok(long.length < 2400, `a stderr line of ${long.length} characters in the log`);
    assert.equal((await callTool(bridge, 'se__echo', { n: 1 })).content[0].text, '{"n":1}');
  });
  // 900: under the 1,000 a second that close a server (next test)
  await withBridge({ CC_CONFIG: writeConfig({ servers: [flooding('ga', 'garbage', '900')] }), LOG_LEVEL: 'info' }, async (bridge) => {
    // the lines come before the answer to the first tools/list, on the same pipe: all read once it is up
    await up(bridge, 'ga');
    const garbage = bridge.logs.filter((l) => l.includes('upstream ga wrote a line that is not JSON'));
    assert.ok(garbage.length > 0 && garbage.length <= 500, `${garbage.length} lines that are not JSON logged of 900`);
    assert.equal((await callTool(bridge, 'ga__echo', { n: 2 })).content[0].text, '{"n":2}');
  });
});

test('bug: a stdio upstream writing lines that are not JSON without pause held the bridge\'s event loop for seconds at a time; now it is closed past 1,000 such lines in a second', { timeout: 60_000 }, () =>
  withBridge({ CC_CONFIG: writeConfig({ servers: [flooding('ga', 'garbage', '200000'), flooding('ok', 'stderr', '0')] }), LOG_LEVEL: 'info' }, async (bridge) => {
    // each such line costs a thrown SyntaxError: 200,000 of them were seconds of the event loop each time
    await until(() => bridge.logs.some((l) => l.includes('upstream ga is down: ')));
    const down = bridge.logs.find((l) => l.includes('upstream ga is down: '));
    assert.match(down, /upstream ga is down: (connection closed before tools\/list was answered: )?it wrote more than 1000 lines that are not JSON in a second on stdout, which is for MCP messages alone; closed; restarting in/);
    const status = (await health(bridge)).servers.find((s) => s.id === 'ga');
    assert.notEqual(status.state, 'up');
    // the other server and the bridge's own tools are served meanwhile
    await up(bridge, 'ok');
    assert.equal((await callTool(bridge, 'ok__echo', { n: 3 })).content[0].text, '{"n":3}');
    assert.match((await callTool(bridge, 'list-computers', {})).content[0].text, /No computers are linked/);
  }));

test('bug: an HTTP upstream streaming events that are not JSON without pause made every request to the bridge take 0.4-2.7 s; now its connection ends past 1,000 such events in a second', { timeout: 60_000 }, async (t) => {
  let listed = false;
  const upstream = createServer(async (req, res) => {
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // once the bridge has listed the tools: 20,000 events that are not JSON
      const flood = () => (listed ? res.end('data: x\n\n'.repeat(20_000)) : setTimeout(flood, 20));
      return flood();
    }
    if (req.method === 'DELETE') return res.writeHead(200).end();
    let text = '';
    for await (const chunk of req) text += chunk;
    const msg = JSON.parse(text);
    if (msg.id === undefined) return res.writeHead(202).end();
    const json = (body) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, ...body }));
    if (msg.method === 'initialize') return json({ result: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'noisy', version: '1' } } });
    if (msg.method === 'tools/list') {
      json({ result: { tools: [{ name: 't', inputSchema: { type: 'object' } }] } });
      listed = true;
      return;
    }
    json({ result: { content: [{ type: 'text', text: 'ok' }] } });
  });
  upstream.listen(0, '127.0.0.1');
  await once(upstream, 'listening');
  t.after(() => new Promise((resolve) => {
    upstream.closeAllConnections();
    upstream.close(resolve);
  }));
  const config = writeConfig({ servers: [{ id: 'hg', url: `http://127.0.0.1:${upstream.address().port}/mcp` }] });
  await withBridge({ CC_CONFIG: config, LOG_LEVEL: 'info' }, async (bridge) => {
    await until(() => bridge.logs.some((l) => l.includes('upstream hg is down: ')));
    assert.match(bridge.logs.find((l) => l.includes('upstream hg is down: ')), /upstream hg is down: it sent more than 1000 events that are not JSON in a second, where every event is an MCP message; closed; restarting in/);
    assert.match((await callTool(bridge, 'list-computers', {})).content[0].text, /No computers are linked/);
  });
});

// (CC_UPSTREAM_RELIST_MS=0: listed again as fast as it answers, as before that bound, so the log budget is what holds)
test('bug: an upstream that said its tools changed after every listing had each re-listing logged ("re-listed its tools: 1, unchanged", about 7,000 lines a second)', { timeout: 60_000 }, () =>
  withBridge({ CC_CONFIG: writeConfig({ servers: [flooding('rl', 'relist-loop')] }), LOG_LEVEL: 'info', CC_UPSTREAM_RELIST_MS: '0' }, async (bridge) => {
    await until(() => bridge.logs.some((l) => l.includes('upstream rl stderr: listed 3000 times')));
    const relisted = bridge.logs.filter((l) => l.includes('upstream rl re-listed its tools'));
    assert.ok(relisted.length >= 1 && relisted.length <= 500, `${relisted.length} lines for 3,000 listings`);
    assert.equal((await callTool(bridge, 'rl__echo', { n: 4 })).content[0].text, '{"n":4}');
  }));

/** The ms of a log line's timestamp. */
const timeOf = (line) => Date.parse(line.slice(0, line.indexOf(' ')));

test('bug: an upstream that said its tools changed after every listing was listed again as fast as it answered, without end (about 25% of a core); now at most once per CC_UPSTREAM_RELIST_MS', { timeout: 60_000 }, () =>
  withBridge({ CC_CONFIG: writeConfig({ servers: [flooding('rl', 'relist-loop')] }), LOG_LEVEL: 'info', CC_UPSTREAM_RELIST_MS: '150' }, async (bridge) => {
    // it keeps listing (each notice is answered by a listing) ...
    await until(() => bridge.logs.filter((l) => l.includes('upstream rl re-listed its tools')).length >= 5);
    const relisted = bridge.logs.filter((l) => l.includes('upstream rl re-listed its tools'));
    // ... each at least 150 ms after the one before: the 5th line was logged after the 5th listing
    // started, which started 3 x 150 ms after the 2nd, which started after the 1st line was logged.
    // (less a few ms: a timer may fire a ms early by Date.now). Before: thousands of listings a
    // second, the five lines within a few ms
    const spanMs = timeOf(relisted[4]) - timeOf(relisted[0]);
    assert.ok(spanMs >= 3 * 150 - 10, `5 re-listings in ${spanMs} ms`);
    assert.equal((await callTool(bridge, 'rl__echo', { n: 5 })).content[0].text, '{"n":5}');
  }));
