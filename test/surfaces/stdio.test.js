// `node dist/index.js --stdio` spawned for real: MCP as one JSON message per line on stdin/stdout,
// logs on stderr, the link listener as usual (fake computers are real WebSocket clients).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeComputer, rpc, until } from '../helpers.js';
import { writeConfig } from '../config/write.js';
import { INIT, run } from './stdio-child.js';

test('stdio: initialize, tools/list and ping answered as lines on stdout; logs and the address lines only on stderr; EOF exits 0', () =>
  run({}, async (bridge) => {
    bridge.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: INIT });
    const init = await bridge.answer(1);
    assert.equal(init.result.protocolVersion, '2025-06-18');
    // list_changed can be delivered on stdio, so it is declared here (and only here)
    assert.deepEqual(init.result.capabilities, { tools: { listChanged: true } });
    bridge.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    bridge.send({ jsonrpc: '2.0', id: 'list', method: 'tools/list' });
    const names = (await bridge.answer('list')).result.tools.map((t) => t.name);
    assert.ok(names.includes('probe-computers') && names.includes('exec-lua'), names.join(','));
    bridge.send({ jsonrpc: '2.0', id: 3, method: 'ping' });
    assert.deepEqual(await bridge.answer(3), { jsonrpc: '2.0', id: 3, result: {} });
    await bridge.linkUrl();
    bridge.stdin.end();
    const r = await bridge.exited;
    assert.equal(r.code, 0);
    // three answers, nothing else (the notification got none)
    assert.equal(r.stdout.split('\n').filter(Boolean).length, 3);
    assert.match(r.stderr, /^cc-mcp-bridge \d+\.\d+\.\d+\nMCP over stdio \(one JSON message per line\)\n/);
    assert.match(r.stderr, /info end of input on stdin; shutting down/);
    assert.doesNotMatch(r.stderr, /MCP endpoint:/, 'no HTTP listener without MCP_PORT');
  }));

test('stdio framing: many messages in one chunk, one message across chunks, CRLF and blank lines, bad JSON (-32700) and an over-long line (-32600) and the stream goes on', () =>
  run({ MCP_MAX_BODY_BYTES: '2048' }, async (bridge) => {
    const ping = (id) => JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' });
    bridge.raw(`${ping(1)}\n${ping(2)}\r\n\n   \n${ping(3)}\n`);
    for (const id of [1, 2, 3]) assert.deepEqual(await bridge.answer(id), { jsonrpc: '2.0', id, result: {} });

    const split = ping('split');
    bridge.raw(split.slice(0, 10));
    // the first half is on its way before the second: answer 4 proves the bridge read past it
    bridge.raw(`${split.slice(10, 20)}`);
    await new Promise((r) => setTimeout(r, 20));
    bridge.raw(`${split.slice(20)}\n`);
    assert.deepEqual(await bridge.answer('split'), { jsonrpc: '2.0', id: 'split', result: {} });

    bridge.raw('{"jsonrpc":"2.0","id":5,"method":\n');
    const parse = await bridge.next((m) => m.error?.code === -32700);
    assert.deepEqual(parse, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the line is not valid JSON' } });
    bridge.send({ jsonrpc: '2.0', id: 6, method: 'ping' });
    assert.deepEqual(await bridge.answer(6), { jsonrpc: '2.0', id: 6, result: {} });

    // 5000 bytes in pieces, over MCP_MAX_BODY_BYTES=2048: refused whole, the next line answered
    const long = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'ping', params: { pad: 'x'.repeat(5000) } });
    bridge.raw(long.slice(0, 1500));
    bridge.raw(long.slice(1500, 3000));
    bridge.raw(`${long.slice(3000)}\n${ping(8)}\n`);
    const tooLong = await bridge.next((m) => m.error?.code === -32600);
    assert.equal(tooLong.id, null);
    assert.match(tooLong.error.message, new RegExp(`a line of ${long.length} bytes is over the limit of 2048 \\(MCP_MAX_BODY_BYTES\\)`));
    assert.deepEqual(await bridge.answer(8), { jsonrpc: '2.0', id: 8, result: {} });
    assert.equal(bridge.messages.filter((m) => m.id === 7).length, 0, 'nothing of the over-long line was run');

    // a request on the last line without a newline is still answered before the exit
    bridge.stdin.end(ping('last'));
    const r = await bridge.closed;
    assert.equal(r.code, 0);
    assert.ok(bridge.messages.some((m) => m.id === 'last' && 'result' in m));
  }));

test('bug: a host whose text encoder starts the stream with a byte order mark (PowerShell, .NET) got -32700 for its initialize; the BOM is dropped', { timeout: 30000 }, () =>
  run({}, async (bridge) => {
    bridge.raw(`\ufeff${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: INIT })}\n`);
    const init = await bridge.answer(1);
    assert.equal(init.result.protocolVersion, '2025-06-18');
    assert.equal(bridge.messages.filter((m) => m.error?.code === -32700).length, 0);
    bridge.stdin.end();
    assert.equal((await bridge.exited).code, 0);
  }));

test('stdio: EOF closes the links with 1001 and exits 0; a call in flight that does not finish within MCP_STDIO_SHUTDOWN_IDLE_MS is cancelled at its computer', () =>
  run({ CC_EXEC_TIMEOUT_MS: '300000', MCP_STDIO_SHUTDOWN_IDLE_MS: '300' }, async (bridge) => {
    const computer = new FakeComputer(await bridge.linkUrl(), { computerId: 4, onRequest: () => null });
    assert.equal((await computer.link()).type, 'hello-ok');
    bridge.send({ jsonrpc: '2.0', id: 'slow', method: 'tools/call', params: { name: 'exec-lua', arguments: { computerId: 4, code: 'sleep(60)' } } });
    const request = await computer.next((f) => f.type === 'request');
    bridge.stdin.end();
    assert.deepEqual(await computer.next((f) => f.type === 'cancel'), { type: 'cancel', id: request.id });
    assert.equal((await computer.closed).code, 1001);
    assert.equal((await bridge.exited).code, 0);
  }));

test('stdio: notifications/cancelled from the client cancels its call (the cancel frame reaches the computer) and the call gets no answer; an unknown id cancels nothing', () =>
  run({ CC_EXEC_TIMEOUT_MS: '300000' }, async (bridge) => {
    const computer = new FakeComputer(await bridge.linkUrl(), { computerId: 2, onRequest: () => null });
    await computer.link();
    bridge.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: INIT });
    await bridge.answer(1);
    bridge.send({ jsonrpc: '2.0', id: 'a', method: 'tools/call', params: { name: 'exec-lua', arguments: { computerId: 2, code: 'sleep(60)' } } });
    const request = await computer.next((f) => f.type === 'request');
    bridge.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'other' } });
    bridge.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'a', reason: 'user pressed Esc' } });
    assert.deepEqual(await computer.next((f) => f.type === 'cancel'), { type: 'cancel', id: request.id });
    assert.equal(computer.received.filter((f) => f.type === 'cancel').length, 1);
    await until(() => /client cancelled request "a": "user pressed Esc"/.test(bridge.out.stderr));
    // no answer for "a" (Claude Code logged one as "Received a response for an unknown message ID",
    // a connection error); the pipe goes on: a later request is answered, and only it
    bridge.send({ jsonrpc: '2.0', id: 'after', method: 'ping' });
    await bridge.answer('after');
    assert.deepEqual(bridge.messages.filter((m) => m.id === 'a'), []);
    await computer.close();
  }));

test('stdio, 2026-07-28 (Claude Code 2.1.330): notifications/cancelled with _meta cancels the call, which gets no answer', () =>
  run({ CC_EXEC_TIMEOUT_MS: '300000' }, async (bridge) => {
    const computer = new FakeComputer(await bridge.linkUrl(), { computerId: 3, onRequest: () => null });
    await computer.link();
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
    bridge.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'exec-lua', arguments: { computerId: 3, code: 'sleep(60)' }, _meta: { ...meta, progressToken: 1 } } });
    const request = await computer.next((f) => f.type === 'request');
    bridge.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, reason: 'SdkError: Request timed out', _meta: meta } });
    assert.deepEqual(await computer.next((f) => f.type === 'cancel'), { type: 'cancel', id: request.id });
    bridge.send({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: meta } });
    await bridge.answer(2);
    assert.deepEqual(bridge.messages.filter((m) => m.id === 1), []);
    await computer.close();
  }));

test('stdio: notifications/tools/list_changed when the tool set changes (CC_CONFIG reloaded by SIGHUP), once per change, only after initialize (where listChanged was declared)', () => {
  const tool = (name) => ({ name, target: { computerId: 1 }, lua: 'return 1' });
  const file = writeConfig({ tools: [tool('one')] });
  return run({ CC_CONFIG: file }, async (bridge) => {
    await bridge.linkUrl();
    // before any request: a change is not announced
    writeConfig({ tools: [tool('one'), tool('early')] }, file);
    bridge.kill('SIGHUP');
    await until(() => /config file reloaded/.test(bridge.out.stderr));
    // a 2026-07-28 request is not enough either: server/discover declares listChanged, but that
    // revision's notices go only to a subscriptions/listen (with its id), never as these plain ones
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
    bridge.send({ jsonrpc: '2.0', id: 'd', method: 'server/discover', params: { _meta: meta } });
    assert.deepEqual((await bridge.answer('d')).result.capabilities.tools, { listChanged: true });
    writeConfig({ tools: [tool('one'), tool('early'), tool('modern')] }, file);
    bridge.kill('SIGHUP');
    await until(() => (bridge.out.stderr.match(/config file reloaded/g) ?? []).length === 2);
    bridge.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: INIT });
    await bridge.answer(1);
    writeConfig({ tools: [tool('one'), tool('two')] }, file);
    bridge.kill('SIGHUP');
    assert.deepEqual(await bridge.next((m) => m.method === 'notifications/tools/list_changed'), { jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
    bridge.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    const names = (await bridge.answer(2)).result.tools.map((t) => t.name);
    assert.ok(names.includes('two') && !names.includes('early') && !names.includes('modern'), names.join(','));
    bridge.stdin.end();
    await bridge.closed;
    assert.equal(bridge.messages.filter((m) => m.method === 'notifications/tools/list_changed').length, 1);
  });
});

test('stdio: 2026-07-28 server/discover and tools/list with _meta beside 2025 initialize on the same stream; an unsupported version is -32022; a legacy probe without _meta is -32601', () =>
  run({}, async (bridge) => {
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
    bridge.send({ jsonrpc: '2.0', id: 'd', method: 'server/discover', params: { _meta: meta } });
    const discover = await bridge.answer('d');
    assert.ok(discover.result.supportedVersions.includes('2026-07-28'), JSON.stringify(discover));
    bridge.send({ jsonrpc: '2.0', id: 'l', method: 'tools/list', params: { _meta: meta } });
    assert.ok((await bridge.answer('l')).result.tools.some((t) => t.name === 'probe-computers'));
    bridge.send({ jsonrpc: '2.0', id: 'old', method: 'tools/list', params: { _meta: { ...meta, 'io.modelcontextprotocol/protocolVersion': '2024-11-05' } } });
    assert.equal((await bridge.answer('old')).error.code, -32022);
    // a probe without _meta is not 2026-07-28: -32601 as over HTTP without the header, and the client falls back
    bridge.send({ jsonrpc: '2.0', id: 'probe', method: 'server/discover' });
    assert.equal((await bridge.answer('probe')).error.code, -32601);
    bridge.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: INIT });
    assert.equal((await bridge.answer(1)).result.protocolVersion, '2025-06-18');
  }));

test('stdio with MCP_HOST off loopback and no token starts (no MCP HTTP port opens), with MCP_PORT it refuses', async () => {
  await run({ MCP_HOST: '0.0.0.0' }, async (bridge) => {
    bridge.send({ jsonrpc: '2.0', id: 1, method: 'ping' });
    assert.deepEqual(await bridge.answer(1), { jsonrpc: '2.0', id: 1, result: {} });
    await bridge.linkUrl();
    bridge.stdin.end();
    const r = await bridge.exited;
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /MCP_HOST|refusing/);
  });
  await run({ MCP_HOST: '0.0.0.0', MCP_PORT: '0' }, async (bridge) => {
    const r = await bridge.exited;
    assert.equal(r.code, 2);
    assert.match(r.stderr, /refusing to start: MCP_HOST=0\.0\.0\.0 is not a loopback address/);
  });
});

test('stdio with MCP_PORT set also serves HTTP, where initialize declares listChanged (sent on GET /mcp); EOF ends an open GET stream and the process exits', () =>
  run({ MCP_PORT: '0' }, async (bridge) => {
    await until(() => /also over HTTP at http:\/\/\S+/.test(bridge.out.stderr));
    const url = /also over HTTP at (http:\/\/\S+)/.exec(bridge.out.stderr)[1];
    const { json, headers } = await rpc(url, { jsonrpc: '2.0', id: 1, method: 'initialize', params: INIT });
    assert.deepEqual(json.result.capabilities, { tools: { listChanged: true } });
    const stream = await fetch(url, { headers: { accept: 'text/event-stream', 'mcp-session-id': headers.get('mcp-session-id') } });
    assert.equal(stream.status, 200);
    const body = stream.text();
    bridge.stdin.end();
    assert.equal((await bridge.exited).code, 0);
    await body; // ended by the shutdown (a keep-alive may have come first)
  }));

test('bug: --stdio refused a message of exactly MCP_MAX_BODY_BYTES sent with a CRLF ending ("a line of 2049 bytes is over the limit of 2048"); the \\r is the line ending, not the message', { timeout: 60_000 }, () =>
  run({ MCP_MAX_BODY_BYTES: '2048' }, async (bridge) => {
    const sized = (id, bytes) => {
      const text = JSON.stringify({ jsonrpc: '2.0', id, method: 'ping', params: { pad: '' } });
      return JSON.stringify({ jsonrpc: '2.0', id, method: 'ping', params: { pad: 'x'.repeat(bytes - text.length) } });
    };
    const exact = sized('crlf', 2048);
    assert.equal(Buffer.byteLength(exact), 2048);
    bridge.raw(`${exact}\r\n`);
    // one byte more is over, whichever the ending, and says its own size
    bridge.raw(`${sized('over', 2049)}\r\n`);
    bridge.raw(`${JSON.stringify({ jsonrpc: '2.0', id: 'next', method: 'ping' })}\r\n`);
    await bridge.answer('next');
    assert.deepEqual(bridge.messages.find((m) => m.id === 'crlf'), { jsonrpc: '2.0', id: 'crlf', result: {} }, JSON.stringify(bridge.messages));
    const refused = bridge.messages.filter((m) => m.id === null);
    assert.equal(refused.length, 1);
    assert.match(refused[0].error.message, /^Invalid Request: a line of 2049 bytes is over the limit of 2048 \(MCP_MAX_BODY_BYTES\); skipped$/);
    assert.equal(bridge.messages.filter((m) => m.id === 'over').length, 0);
  }));

test('bug: --stdio decoded a line that is not valid UTF-8 with U+FFFD in place of the bad bytes and ran it (Lua code or a file\'s text silently changed, the id echoed changed); now it is -32700 naming UTF-8, not run, and the next line is read', { timeout: 60_000 }, () =>
  run({}, async (bridge) => {
    const computer = new FakeComputer(await bridge.linkUrl(), { computerId: 8 });
    assert.equal((await computer.link()).type, 'hello-ok');
    // "print('caf\xe9')": Latin-1, not UTF-8
    const call = Buffer.concat([
      Buffer.from(`{"jsonrpc":"2.0","id":"latin1","method":"tools/call","params":{"name":"exec-lua","arguments":{"computerId":8,"code":"print('caf`),
      Buffer.from([0xe9]),
      Buffer.from(`')"}}}\n`),
    ]);
    bridge.stdin.write(call);
    bridge.stdin.write(Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":"id'), Buffer.from([0xff]), Buffer.from('","method":"ping"}\n')]));
    bridge.send({ jsonrpc: '2.0', id: 'next', method: 'ping' });
    await bridge.answer('next');
    const errors = bridge.messages.filter((m) => m.id === null);
    assert.deepEqual(errors.map((m) => m.error.code), [-32700, -32700], JSON.stringify(bridge.messages));
    assert.equal(errors[0].error.message, `Parse error: the line (${call.length - 1} bytes) is not valid UTF-8, which every MCP message is; skipped`);
    assert.equal(bridge.messages.filter((m) => m.id !== null && m.id !== 'next').length, 0, 'nothing else answered');
    assert.deepEqual(computer.received.filter((f) => f.type === 'request'), [], 'the mangled code never reached the computer');
    await computer.close();
  }));

test('bug: --stdio with an empty MCP_PORT started HTTP on port 3000 (empty is unset for every other variable, and --help says HTTP is off unless MCP_PORT is set)', { timeout: 60_000 }, () =>
  run({ MCP_PORT: '' }, async (bridge) => {
    await until(() => /MCP over stdio/.test(bridge.out.stderr));
    assert.doesNotMatch(bridge.out.stderr, /also over HTTP/);
  }));
