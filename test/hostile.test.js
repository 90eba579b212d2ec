// Regression tests for the hostile-input defects of issue 7, each named after its defect, over a
// real bridge: real WebSocket computers and real HTTP.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { once } from 'node:events';
import { callTool, linkComputer, pongText, rpc, until, withBridge } from './helpers.js';

const deepArray = (levels) => '['.repeat(levels) + ']'.repeat(levels);

async function healthOk(bridge) {
  const res = await fetch(bridge.mcpUrl.replace(/\/mcp$/, '/health'));
  return res.status === 200;
}

test('defect 1: a link frame with a 5,000-deep type no longer stops the bridge', () =>
  withBridge({}, async (bridge) => {
    const good = await linkComputer(bridge, { computerId: 1 });
    // before the fix this threw RangeError out of the ws message handler and the process exited;
    // each on its own socket, since a socket whose first frame is refused reads no more
    for (const frame of ['{"type":' + deepArray(5000) + '}', '{"type":"hello","computerId":' + deepArray(20000) + '}', deepArray(100000)]) {
      const ws = new WebSocket(bridge.linkUrl);
      await once(ws, 'open');
      ws.send(frame);
      const [code] = await once(ws, 'close');
      assert.equal(code, 1008);
    }
    assert.equal(bridge.logs.filter((l) => /refused before hello: the first frame must be a hello; frame nests deeper than 64 levels; closing/.test(l)).length, 3);
    // the message never quotes the frame
    assert.ok(!bridge.logs.some((l) => l.includes('[[[[')));
    assert.ok(await healthOk(bridge));
    const result = await callTool(bridge, 'probe-computers');
    assert.equal(result.content[0].text, pongText(1, null));
    await good.close();
  }));

const nested = (levels) => JSON.parse(deepArray(levels));

test('defect 3: a computer answering exec-lua with a 6,000-deep value gets a clear isError answer with the call\'s id', () =>
  withBridge({}, async (bridge) => {
    const computer = await linkComputer(bridge, {
      computerId: 3,
      onRequest: (frame) =>
        frame.method !== 'exec-lua'
          ? null
          : '{"type":"response","id":' + JSON.stringify(frame.id) + ',"ok":false,"error":"x","result":{"output":"","returns":[{"type":"nil","x":' + deepArray(6000) + '}]}}',
    });
    computer.onRequest = ((inner) => (frame) => {
      const text = inner(frame);
      if (typeof text === 'string') computer.ws.send(text);
      return null;
    })(computer.onRequest);
    // alone, and in a batch beside a ping: each answer carries its own id
    const single = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 41, method: 'tools/call', params: { name: 'exec-lua', arguments: { computerId: 3, code: 'x', timeoutMs: 20000 } } });
    assert.equal(single.status, 200);
    assert.equal(single.json.id, 41);
    assert.equal(single.json.result.isError, true);
    assert.match(single.json.result.content[0].text, /protocol error: the computer sent a malformed response \(frame nests deeper than 64 levels\)/);
    const batch = await rpc(
      bridge.mcpUrl,
      [
        { jsonrpc: '2.0', id: 'a', method: 'tools/call', params: { name: 'exec-lua', arguments: { computerId: 3, code: 'x', timeoutMs: 20000 } } },
        { jsonrpc: '2.0', id: 'b', method: 'ping' },
      ],
      { 'mcp-protocol-version': '2025-03-26' },
    );
    assert.equal(batch.status, 200);
    assert.deepEqual(batch.json.map((r) => r.id), ['a', 'b']);
    assert.equal(batch.json[0].result.isError, true);
    assert.deepEqual(batch.json[1].result, {});
    await computer.close();
  }));

test('defect 3: exec-lua results are validated: too deep returns, bad descriptors, neither output nor returns', () =>
  withBridge({}, async (bridge) => {
    const answers = [
      [{ ok: true, result: { output: '', returns: [{ type: 'table', value: nested(40) }] } }, /"returns" nests deeper than 32 levels/],
      [{ ok: false, error: 'boom', result: { output: '', returns: [{ type: 'table', value: nested(40) }] } }, /boom\nprotocol error: computer 4 \(Label: null\) sent a malformed exec-lua result: "returns" nests deeper/],
      [{ ok: true, result: {} }, /the result has neither "output" nor "returns"/],
      [{ ok: true, result: { truncated: false } }, /neither "output" nor "returns"/],
      [{ ok: true, result: [1] }, /the result is an array, not an object/],
      [{ ok: true, result: { output: 5 } }, /"output" is a number, not a string/],
      [{ ok: true, result: { returns: {} } }, /"returns" is an object, not an array/],
      [{ ok: true, result: { output: '', truncated: 'no' } }, /"truncated" is a string, not a boolean/],
      [{ ok: true, result: { returns: [7] } }, /"returns"\[0\] is a number, not a value descriptor object/],
      [{ ok: true, result: { returns: [{ type: 'nil' }, { type: 'bignum' }] } }, /"returns"\[1\]\.type is not a Lua type name/],
      [{ ok: true, result: { returns: [{ type: 'function', repr: [] }] } }, /"returns"\[0\]\.repr is an array, not a string/],
      [{ ok: true, result: { returns: [{ type: 'table', value: {}, truncated: 1 }] } }, /"returns"\[0\]\.truncated is a number, not a boolean/],
      [{ ok: true, result: { returns: Array.from({ length: 400 }, () => ({ type: 'table', value: new Array(300).fill(0) })) } }, /"returns" holds more than 100000 values/],
    ];
    let next = 0;
    const computer = await linkComputer(bridge, { computerId: 4, onRequest: (frame) => (frame.method === 'exec-lua' ? answers[next][0] : null) });
    for (next = 0; next < answers.length; next++) {
      const result = await callTool(bridge, 'exec-lua', { computerId: 4, code: 'x', timeoutMs: 20000 });
      assert.equal(result.isError, true, `answer ${next}`);
      assert.match(result.content[0].text, answers[next][1], `answer ${next}`);
    }
    // a well-formed result still passes
    answers.push([{ ok: true, result: { output: 'hi\n', returns: [{ type: 'table', value: nested(16) }, { type: 'function', repr: 'function: 0x1' }] } }]);
    const good = await callTool(bridge, 'exec-lua', { computerId: 4, code: 'x' });
    assert.equal(good.isError, undefined);
    assert.match(good.content[0].text, /^hi\n=> \[\[\[/);
    await computer.close();
  }));

test('defect 4: one computer\'s 5,000-deep pong is its own error line; the others still pong', () =>
  withBridge({}, async (bridge) => {
    const deep = await linkComputer(bridge, { computerId: 5, onRequest: () => null });
    deep.onRequest = (frame) => {
      deep.ws.send('{"type":"response","id":' + JSON.stringify(frame.id) + ',"ok":true,"result":' + deepArray(5000) + '}');
      return null;
    };
    const medium = await linkComputer(bridge, { computerId: 6, onRequest: () => ({ ok: true, result: nested(40) }) });
    const good = await linkComputer(bridge, { computerId: 7 });
    const result = await callTool(bridge, 'probe-computers');
    const lines = result.content[0].text.split('\n');
    assert.match(lines[0], /^error from 5 \(Label: null\): protocol error: the computer sent a malformed response \(frame nests deeper than 64 levels\)$/);
    assert.equal(lines[1], 'error from 6 (Label: null): protocol error: its pong nests deeper than 16 levels');
    assert.equal(lines[2], pongText(7, null));
    for (const c of [deep, medium, good]) await c.close();
  }));

test('defect 2: a batch longer than MCP_MAX_BATCH gets a clear 400 instead of a 59 MB answer', () =>
  withBridge({ MCP_MAX_BATCH: '3' }, async (bridge) => {
    const old = { 'mcp-protocol-version': '2025-03-26' };
    const big = await rpc(bridge.mcpUrl, '[' + new Array(524001).fill('1').join(',') + ']', old);
    assert.equal(big.status, 400);
    assert.equal(big.json.error.code, -32600);
    assert.equal(big.json.error.message, 'Invalid Request: the batch holds 524001 messages; at most 3 are allowed (MCP_MAX_BATCH)');
    assert.ok(big.text.length < 200);
    const ok = await rpc(bridge.mcpUrl, [1, 2, { jsonrpc: '2.0', id: 9, method: 'ping' }], old);
    assert.equal(ok.status, 200);
    assert.equal(ok.json.length, 3);
  }));

const V2025 = { 'mcp-protocol-version': '2025-03-26' };

test('defect 2: MCP_MAX_BATCH sets the limit', () =>
  withBridge({ MCP_MAX_BATCH: '2' }, async (bridge) => {
    const res = await rpc(bridge.mcpUrl, [1, 2, 3], V2025);
    assert.equal(res.status, 400);
    assert.match(res.json.error.message, /at most 2 are allowed/);
  }));

test('defect 2: an answer far larger than a socket buffer arrives whole, multi-byte text intact', () =>
  withBridge({}, async (bridge) => {
    const text = 'é😀'.repeat(60_000);
    const computer = await linkComputer(bridge, {
      computerId: 9,
      onRequest: () => ({ ok: true, result: { output: text, returns: [] } }),
    });
    const result = await callTool(bridge, 'exec-lua', { computerId: 9, code: 'x()' });
    assert.equal(result.structuredContent.output, text);
    await computer.close();
  }));

test('MCP bodies deeper than MCP_MAX_JSON_DEPTH get a 400 with their id; REST bodies a 400 invalid_body', () =>
  withBridge({}, async (bridge) => {
    const deep = await rpc(bridge.mcpUrl, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"exec-lua","arguments":{"code":${deepArray(10000)}}}}`);
    assert.equal(deep.status, 400);
    assert.equal(deep.json.id, 7);
    assert.match(deep.json.error.message, /the body nests deeper than 64 levels \(MCP_MAX_JSON_DEPTH\)/);
    const batch = await rpc(bridge.mcpUrl, `[${deepArray(10000)}]`, V2025);
    assert.equal(batch.status, 400);
    const rest = await fetch(bridge.mcpUrl.replace(/\/mcp$/, '/tools/exec-lua'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: `{"code":${deepArray(10000)}}` });
    assert.equal(rest.status, 400);
    const json = await rest.json();
    assert.equal(json.error.code, 'invalid_body');
    assert.match(json.error.message, /nests deeper than 64 levels/);
    assert.ok(await healthOk(bridge));
  }));


test('MCP_MAX_JSON_DEPTH at its smallest (2): the shortest texts one level too deep get the 400, over both eras; one level less is served', () =>
  withBridge({ MCP_MAX_JSON_DEPTH: '2' }, async (bridge) => {
    // 6 bytes, 3 levels: exactly the length below which the dispatcher skips the walk
    const batch = await rpc(bridge.mcpUrl, '[[[]]]', V2025);
    assert.equal(batch.status, 400);
    assert.match(batch.json.error.message, /the body nests deeper than 2 levels \(MCP_MAX_JSON_DEPTH\)/);
    const ping = await rpc(bridge.mcpUrl, '{"jsonrpc":"2.0","id":3,"method":"ping","params":{"a":{}}}', V2025);
    assert.equal(ping.status, 400);
    assert.equal(ping.json.id, 3);
    assert.match(ping.json.error.message, /MCP_MAX_JSON_DEPTH/);
    const modern = await rpc(bridge.mcpUrl, '{"jsonrpc":"2.0","id":4,"method":"ping","params":{"a":[]}}', { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'ping' });
    assert.equal(modern.status, 400);
    assert.equal(modern.json.id, 4);
    assert.match(modern.json.error.message, /MCP_MAX_JSON_DEPTH/);
    const fine = await rpc(bridge.mcpUrl, '{"jsonrpc":"2.0","id":5,"method":"ping","params":{}}', V2025);
    assert.equal(fine.status, 200);
    assert.deepEqual(fine.json, { jsonrpc: '2.0', id: 5, result: {} });
    // REST: 3 levels in 6 bytes ('[[[]]]', the least there is: 2 * (2 + 1)) and in a few more
    const restUrl = bridge.mcpUrl.replace(/\/mcp$/, '/tools/probe-computers');
    for (const body of ['[[[]]]', '{"a":[{}]}', '{"x":[[]]}']) {
      const rest = await fetch(restUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      assert.equal(rest.status, 400, body);
      const json = await rest.json();
      assert.equal(json.error.code, 'invalid_body');
      assert.match(json.error.message, /^The body nests deeper than 2 levels \(MCP_MAX_JSON_DEPTH\)$/);
    }
  }));

test('CC_MAX_JSON_DEPTH is the link\'s bound: at 8, a frame 8 levels deep is read and one 9 deep is a malformed response (no test set it before)', () =>
  withBridge({ CC_MAX_JSON_DEPTH: '8' }, async (bridge) => {
    // the response frame is one level, its result the rest
    const within = await linkComputer(bridge, { computerId: 7, onRequest: () => ({ ok: true, result: nested(7) }) });
    const deeper = await linkComputer(bridge, { computerId: 8, onRequest: () => ({ ok: true, result: nested(8) }) });
    const lines = (await callTool(bridge, 'probe-computers')).content[0].text.split('\n');
    assert.ok(lines.includes('[[[[[[[]]]]]]]'), lines.join('\n'));
    assert.ok(lines.includes('error from 8 (Label: null): protocol error: the computer sent a malformed response (frame nests deeper than 8 levels)'), lines.join('\n'));
    await within.close();
    await deeper.close();
  }));
