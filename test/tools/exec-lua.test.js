import { test } from 'node:test';
import assert from 'node:assert/strict';
import { callTool, linkComputer, rpc, session, withBridge } from '../helpers.js';
import { BUILTIN_TOOLS } from '../../dist/tools/builtins.js';

// the safe tools (built-ins besides probe-computers and exec-lua): tools added later need no edit here
const SAFE_TOOLS = BUILTIN_TOOLS.map((t) => t.name).filter((n) => n !== 'probe-computers' && n !== 'exec-lua');


const answer = (result) => () => ({ ok: true, result });

test('routes by computerId and by exact label; sends the code; renders output and returns', () =>
  withBridge({}, async (bridge) => {
    const seen = [];
    const returns = [
      { type: 'number', value: 2 },
      { type: 'nil' },
      { type: 'table', value: { a: 1 } },
      { type: 'string', value: 'hi' },
      { type: 'function', repr: 'function: 0x1' },
      { type: 'number', repr: 'nan' },
    ];
    const reply = (frame) => {
      seen.push(frame);
      return { ok: true, result: { output: 'hello\nworld\n', returns, truncated: false } };
    };
    const a = await linkComputer(bridge, { computerId: 1, computerLabel: 'alpha', onRequest: reply });
    const b = await linkComputer(bridge, { computerId: 2, computerLabel: 'beta', onRequest: () => ({ ok: true, result: { output: '', returns: [], truncated: false } }) });
    const byId = await callTool(bridge, 'exec-lua', { computerId: 1, code: 'print("hello") return 2' });
    assert.equal(seen.length, 1);
    assert.equal(seen[0].method, 'exec-lua');
    assert.deepEqual(seen[0].params, { code: 'print("hello") return 2' });
    assert.equal(byId.isError, undefined);
    assert.equal(byId.content[0].text, 'hello\nworld\n=> 2, nil, {"a":1}, "hi", function: 0x1, nan');
    assert.deepEqual(byId.structuredContent, {
      computerId: 1,
      ok: true,
      output: 'hello\nworld\n',
      returns,
      truncated: false,
    });
    const byLabel = await callTool(bridge, 'exec-lua', { computer: 'alpha', code: 'return' });
    assert.equal(byLabel.structuredContent.computerId, 1);
    assert.equal(seen.length, 2);
    const quiet = await callTool(bridge, 'exec-lua', { computer: 'beta', code: 'x = 1' });
    assert.equal(quiet.content[0].text, '(no output, nothing returned)');
    assert.equal(quiet.structuredContent.computerId, 2);
    await a.close();
    await b.close();
  }));

test('unknown, ambiguous or unnamed computers are isError results that list the linked computers', () =>
  withBridge({}, async (bridge) => {
    const none = await callTool(bridge, 'exec-lua', { computerId: 9, code: 'return 1' });
    assert.equal(none.isError, true);
    assert.equal(none.content[0].text, 'No linked computer has id 9. No computers are linked.');
    const c1 = await linkComputer(bridge, { computerId: 1, computerLabel: 'twin' });
    const c2 = await linkComputer(bridge, { computerId: 2, computerLabel: 'twin' });
    const c3 = await linkComputer(bridge, { computerId: 3 });
    const list = 'Linked computers: 1 (Label: twin), 2 (Label: twin), 3 (Label: null).';
    const cases = [
      [{ computerId: 9, code: 'x' }, `No linked computer has id 9. ${list}`],
      [{ computer: 'nobody', code: 'x' }, `No linked computer has the label "nobody". ${list}`],
      [{ computer: 'twin', code: 'x' }, `The label "twin" matches 2 computers (ids 1, 2); use "computerId". ${list}`],
      [{ code: 'x' }, `Say which computer: "computerId" (a number) or "computer" (an exact label). ${list}`],
      [{ computerId: 1, computer: 'twin', code: 'x' }, `Give either "computerId" or "computer", not both. ${list}`],
    ];
    for (const [args, text] of cases) {
      const result = await callTool(bridge, 'exec-lua', args);
      assert.equal(result.isError, true);
      assert.equal(result.content[0].text, text);
    }
    for (const c of [c1, c2, c3]) assert.equal(c.received.filter((f) => f.type === 'request').length, 0);
    await Promise.all([c1, c2, c3].map((c) => c.close()));
  }));

test('bug: "computer": "3" (a label that is a linked computer\'s id, what cc-mcp computer=3 sends) answered only "No linked computer has the label "3". Linked computers: ..., 3 (Label: null)"; now it says to give computerId', () =>
  withBridge({}, async (bridge) => {
    const c = await linkComputer(bridge, { computerId: 3 });
    const id = await callTool(bridge, 'exec-lua', { computer: '3', code: 'x' });
    assert.equal(id.isError, true);
    assert.equal(id.content[0].text, 'No linked computer has the label "3". "computer" names a computer by its label; for computer 3 by its id, give "computerId": 3. Linked computers: 3 (Label: null).');
    // not an id of a linked computer, or not an id at all: as before
    for (const label of ['4', '03', '3.0', 'three']) {
      assert.equal((await callTool(bridge, 'exec-lua', { computer: label, code: 'x' })).content[0].text, `No linked computer has the label ${JSON.stringify(label)}. Linked computers: 3 (Label: null).`, label);
    }
    assert.equal(c.received.filter((f) => f.type === 'request').length, 0);
    await c.close();
  }));

test('bad argument types, empty code and oversized code are isError results naming the argument', () =>
  withBridge({}, async (bridge) => {
    const c = await linkComputer(bridge, { computerId: 1 });
    const cases = [
      [{ computerId: 1, code: '' }, /argument "code" must not be empty/],
      [{ computerId: 1 }, /argument "code" is required/],
      [{ computerId: '1', code: 'x' }, /argument "computerId" must be an integer, got a string/],
      [{ computerId: 1, code: 5 }, /argument "code" must be a string/],
      [{ computerId: 1, code: 'x', timeoutMs: 0 }, /argument "timeoutMs" must be at least 1/],
      [{ computerId: 1, code: 'x', timeoutMs: 300001 }, /argument "timeoutMs" must be at most 300000/],
      [{ computerId: 1, code: 'x'.repeat(65537) }, /argument "code" is 65537 bytes; at most 65536 are allowed \(CC_EXEC_MAX_CODE_BYTES\)/],
      [{ computerId: 1, code: 'é'.repeat(40000) }, /"code" is 80000 bytes; at most 65536 are allowed/],
      [{ computerId: 1, code: 'x', extra: 1 }, /unknown argument "extra"/],
    ];
    for (const [args, pattern] of cases) {
      const result = await callTool(bridge, 'exec-lua', args);
      assert.equal(result.isError, true, JSON.stringify(args).slice(0, 80));
      assert.match(result.content[0].text, pattern);
    }
    assert.equal(c.received.filter((f) => f.type === 'request').length, 0);
    await c.close();
  }));

test('CC_EXEC_MAX_CODE_BYTES sets the code limit both ways; above what the computer can receive, the frame limit still refuses before sending', async () => {
  await withBridge({ CC_EXEC_MAX_CODE_BYTES: '2048' }, async (bridge) => {
    const c = await linkComputer(bridge, { computerId: 1, onRequest: () => ({ ok: true, result: { output: 'ran\n', returns: [] } }) });
    const big = await callTool(bridge, 'exec-lua', { computerId: 1, code: '-'.repeat(2049) });
    assert.equal(big.isError, true);
    assert.equal(big.content[0].text, 'argument "code" is 2049 bytes; at most 2048 are allowed (CC_EXEC_MAX_CODE_BYTES).');
    assert.equal(c.received.filter((f) => f.type === 'request').length, 0);
    assert.equal((await callTool(bridge, 'exec-lua', { computerId: 1, code: '-'.repeat(2048) })).structuredContent.output, 'ran\n');
    // counted in UTF-8 bytes: 683 three-byte characters are 2049 bytes, though only 683 characters
    const wide = await callTool(bridge, 'exec-lua', { computerId: 1, code: '€'.repeat(683) });
    assert.equal(wide.content[0].text, 'argument "code" is 2049 bytes; at most 2048 are allowed (CC_EXEC_MAX_CODE_BYTES).');
    assert.equal((await callTool(bridge, 'exec-lua', { computerId: 1, code: `--${'€'.repeat(682)}` })).structuredContent.output, 'ran\n');
    assert.equal(c.received.filter((f) => f.type === 'request').length, 2);
    await c.close();
  });
  await withBridge({ CC_EXEC_MAX_CODE_BYTES: '300000' }, async (bridge) => {
    const c = await linkComputer(bridge, { computerId: 1, onRequest: () => ({ ok: true, result: { output: 'ran\n', returns: [] } }) });
    assert.equal((await callTool(bridge, 'exec-lua', { computerId: 1, code: '-'.repeat(100_000) })).structuredContent.output, 'ran\n');
    const tooBig = await callTool(bridge, 'exec-lua', { computerId: 1, code: '-'.repeat(200_000) });
    assert.equal(tooBig.isError, true);
    assert.match(tooBig.content[0].text, /too large to send: request is \d+ bytes encoded; the computer accepts at most 131072/);
    assert.equal(c.received.filter((f) => f.type === 'request').length, 1);
    await c.close();
  });
});

test('code that escapes to more than CC can receive is refused before sending', () =>
  withBridge({}, async (bridge) => {
    const c = await linkComputer(bridge, { computerId: 1 });
    // control characters escape to six bytes each in JSON
    const result = await callTool(bridge, 'exec-lua', { computerId: 1, code: '\u0001'.repeat(60000) });
    assert.equal(result.isError, true);
    assert.match(result.content[0].text, /too large to send: request is \d+ bytes encoded; the computer accepts at most 131072/);
    await c.close();
  }));

test('timeout: the call answers isError and a cancel frame goes to that computer', () =>
  withBridge({}, async (bridge) => {
    const c = await linkComputer(bridge, { computerId: 1, onRequest: () => null });
    const result = await callTool(bridge, 'exec-lua', { computerId: 1, code: 'sleep(100)', timeoutMs: 50 });
    assert.equal(result.isError, true);
    assert.match(result.content[0].text, /^error: timed out after 50 ms; cancel sent\. .*Too long without yielding/);
    assert.equal(result.structuredContent.ok, false);
    const request = c.received.find((f) => f.type === 'request');
    assert.deepEqual(await c.next((f) => f.type === 'cancel'), { type: 'cancel', id: request.id });
    await c.close();
  }));

test('the default timeout is CC_EXEC_TIMEOUT_MS', () =>
  withBridge({ CC_EXEC_TIMEOUT_MS: '40' }, async (bridge) => {
    const c = await linkComputer(bridge, { computerId: 1, onRequest: () => null });
    const result = await callTool(bridge, 'exec-lua', { computerId: 1, code: 'while true do sleep(1) end' });
    assert.match(result.content[0].text, /timed out after 40 ms/);
    await c.close();
  }));

test('notifications/cancelled: cancel frame sent, call answers isError', () =>
  withBridge({}, async (bridge) => {
    const c = await linkComputer(bridge, { computerId: 1, onRequest: () => null });
    const s = await session(bridge.mcpUrl);
    const call = rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 0, method: 'tools/call', params: { name: 'exec-lua', arguments: { computerId: 1, code: 'sleep(60)', timeoutMs: 60000 } } }, s);
    const request = await c.next((f) => f.type === 'request');
    const note = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 0, reason: 'user stopped it' } }, s);
    assert.equal(note.status, 202);
    assert.deepEqual(await c.next((f) => f.type === 'cancel'), { type: 'cancel', id: request.id });
    const { json } = await call;
    assert.equal(json.id, 0);
    assert.equal(json.result.isError, true);
    assert.match(json.result.content[0].text, /cancelled; cancel sent to the computer/);
    assert.ok(bridge.logs.some((l) => /client cancelled request 0: "user stopped it"/.test(l)));
    await c.close();
  }));

test('a cancel for another request id touches nothing', () =>
  withBridge({}, async (bridge) => {
    let release;
    const c = await linkComputer(bridge, {
      computerId: 1,
      onRequest: () => new Promise((r) => (release = () => r({ ok: true, result: { output: 'done', returns: [], truncated: false } }))),
    });
    const call = rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 'a', method: 'tools/call', params: { name: 'exec-lua', arguments: { computerId: 1, code: 'x' } } });
    await c.next((f) => f.type === 'request');
    await rpc(bridge.mcpUrl, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'b' } });
    // a numeric 0 and a string "0" are different ids
    await rpc(bridge.mcpUrl, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7 } });
    release();
    const { json } = await call;
    assert.equal(json.result.structuredContent.output, 'done');
    assert.equal(c.received.some((f) => f.type === 'cancel'), false);
    await c.close();
  }));

test('Lua errors come back as isError with the message and the output before it', () =>
  withBridge({}, async (bridge) => {
    const c = await linkComputer(bridge, {
      computerId: 1,
      onRequest: () => ({ ok: false, error: 'exec-lua:2: attempt to call nil', result: { output: 'before\n', returns: [], truncated: false } }),
    });
    const result = await callTool(bridge, 'exec-lua', { computerId: 1, code: 'print("before")\nnope()' });
    assert.equal(result.isError, true);
    assert.equal(result.content[0].text, 'before\nerror: exec-lua:2: attempt to call nil');
    assert.deepEqual(result.structuredContent, {
      computerId: 1,
      ok: false,
      output: 'before\n',
      returns: [],
      truncated: false,
      error: 'exec-lua:2: attempt to call nil',
    });
    await c.close();
  }));

test('truncated results are flagged in the text', () =>
  withBridge({}, async (bridge) => {
    const c = await linkComputer(bridge, { computerId: 1, onRequest: answer({ output: 'x'.repeat(10), returns: [], truncated: true }) });
    const result = await callTool(bridge, 'exec-lua', { computerId: 1, code: 'x' });
    assert.equal(result.structuredContent.truncated, true);
    assert.match(result.content[0].text, /truncated to fit the link message limit/);
    await c.close();
  }));

test('an older program answering "unknown method" is told to update', () =>
  withBridge({}, async (bridge) => {
    const c = await linkComputer(bridge, { computerId: 4, computerLabel: 'old' });
    const result = await callTool(bridge, 'exec-lua', { computerId: 4, code: 'return 1' });
    assert.equal(result.isError, true);
    assert.match(result.content[0].text, /computer 4 \(Label: old\) runs an mcp-computer program without exec-lua; update its program/);
    await c.close();
  }));

test('a malformed result from the computer is an isError result, not a crash', () =>
  withBridge({}, async (bridge) => {
    for (const bad of ['text', { output: 5 }, { returns: 'x' }, { truncated: 'no' }]) {
      const c = await linkComputer(bridge, { computerId: 1, onRequest: answer(bad) });
      const result = await callTool(bridge, 'exec-lua', { computerId: 1, code: 'x' });
      assert.equal(result.isError, true);
      assert.match(result.content[0].text, /sent a malformed exec-lua result/);
      await c.close();
    }
    // a missing field defaults sensibly when the other is there; neither is a protocol error (issue 7)
    const empty = await linkComputer(bridge, { computerId: 1, onRequest: answer({}) });
    const none = await callTool(bridge, 'exec-lua', { computerId: 1, code: 'x' });
    assert.equal(none.isError, true);
    assert.match(none.content[0].text, /neither "output" nor "returns"/);
    await empty.close();
    const c = await linkComputer(bridge, { computerId: 1, onRequest: answer({ returns: [] }) });
    const ok = await callTool(bridge, 'exec-lua', { computerId: 1, code: 'x' });
    assert.deepEqual(ok.structuredContent, { computerId: 1, ok: true, output: '', returns: [], truncated: false });
    await c.close();
  }));

test('the link dropping mid-call ends the call at once with isError', () =>
  withBridge({}, async (bridge) => {
    const c = await linkComputer(bridge, {
      computerId: 1,
      onRequest: () => {
        c.ws.close(1011);
        return null;
      },
    });
    const result = await callTool(bridge, 'exec-lua', { computerId: 1, code: 'x', timeoutMs: 300000 });
    assert.equal(result.isError, true);
    assert.match(result.content[0].text, /the link to computer 1 \(Label: null\) dropped before it answered \(closed 1011\)/);
  }));

test('policy off: exec-lua is not listed and a call answers isError', () =>
  withBridge({ CC_EXEC_LUA: 'off' }, async (bridge) => {
    const c = await linkComputer(bridge, { computerId: 1 });
    const { json } = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    assert.deepEqual(json.result.tools.map((t) => t.name), ['probe-computers', ...SAFE_TOOLS]);
    const result = await callTool(bridge, 'exec-lua', { computerId: 1, code: 'return 1' });
    assert.equal(result.isError, true);
    assert.match(result.content[0].text, /exec-lua is disabled on this bridge \(CC_EXEC_LUA=off\)/);
    assert.equal(c.received.some((f) => f.type === 'request'), false);
    const init = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 2, method: 'initialize', params: { protocolVersion: '2025-11-25' } });
    assert.doesNotMatch(init.json.result.instructions, /exec-lua/);
    await c.close();
  }));

test('policy on: exec-lua is listed with input and output schemas', () =>
  withBridge({}, async (bridge) => {
    const { json } = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const tool = json.result.tools.find((t) => t.name === 'exec-lua');
    assert.deepEqual(tool.inputSchema.required, ['code']);
    assert.equal(tool.inputSchema.additionalProperties, false);
    assert.deepEqual(tool.outputSchema.required, ['computerId', 'ok', 'output', 'returns', 'truncated']);
  }));

test('CC_EXEC_MAX_RESULT_VALUES bounds the returned values (was a fixed 100,000): at the limit they render, one more fails the call naming the variable', () =>
  withBridge({ CC_EXEC_MAX_RESULT_VALUES: '1000' }, async (bridge) => {
    // JSON values counted: the returns array, the descriptor, its type and value, and n numbers
    const returnsOf = (n) => [{ type: 'table', value: Array.from({ length: n }, (_, i) => i) }];
    const c = await linkComputer(bridge, {
      computerId: 1,
      onRequest: (f) => ({ ok: true, result: { output: '', returns: returnsOf(f.method === 'exec-lua' ? f.params.code.length : f.params.argCount), truncated: false } }),
    });
    const atLimit = await callTool(bridge, 'exec-lua', { computerId: 1, code: 'x'.repeat(996) });
    assert.equal(atLimit.isError, undefined, atLimit.content[0].text);
    assert.equal(atLimit.structuredContent.returns[0].value.length, 996);
    const over = await callTool(bridge, 'exec-lua', { computerId: 1, code: 'x'.repeat(997) });
    assert.equal(over.isError, true);
    assert.match(over.content[0].text, /malformed exec-lua result: "returns" holds more than 1000 values \(CC_EXEC_MAX_RESULT_VALUES\)/);
    await c.close();
  }));
