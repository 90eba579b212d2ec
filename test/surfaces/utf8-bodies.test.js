// A body that is not valid UTF-8 over HTTP (POST /mcp and REST POST /tools/<name>), real HTTP and a
// real fake computer: refused with a parse error, never decoded with U+FFFD in place of the bad bytes
// and run changed (the same rule as --stdio lines, test/surfaces/stdio.test.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { linkComputer, withBridge } from '../helpers.js';

/** exec-lua of `print('café')` with the é in Latin-1 (one byte 0xe9): not UTF-8. */
const latin1Call = (prefix, suffix) => Buffer.concat([Buffer.from(`${prefix}"computerId":3,"code":"print('caf`), Buffer.from([0xe9]), Buffer.from(`')"${suffix}`)]);

const post = (url, body) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body });

test('bug: POST /mcp and REST POST /tools/exec-lua with a body that is not UTF-8 ran the call with U+FFFD in place of the bad bytes (the computer got changed Lua code); now 400, -32700 and invalid_json, and nothing reaches the computer', { timeout: 60_000 }, () =>
  withBridge({}, async (bridge) => {
    const computer = await linkComputer(bridge, { computerId: 3, onRequest: () => ({ ok: true, result: { ok: true, output: '', returns: [] } }) });
    const mcp = await post(bridge.mcpUrl, latin1Call('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"exec-lua","arguments":{', '}}}'));
    assert.equal(mcp.status, 400);
    assert.deepEqual(await mcp.json(), { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the body is not valid UTF-8, which every MCP message is' } });
    const rest = await post(new URL('/tools/exec-lua', bridge.mcpUrl), latin1Call('{', '}'));
    assert.equal(rest.status, 400);
    assert.deepEqual(await rest.json(), { error: { code: 'invalid_json', message: 'The body is not valid UTF-8 (JSON is UTF-8)' } });
    // the same call in UTF-8 runs: the refusal is the encoding, nothing else
    const good = await post(new URL('/tools/exec-lua', bridge.mcpUrl), JSON.stringify({ computerId: 3, code: "print('café')" }));
    assert.equal(good.status, 200, await good.clone().text());
    const requests = computer.received.filter((f) => f.type === 'request');
    assert.deepEqual(requests.map((f) => f.params.code), ["print('café')"], 'only the UTF-8 call reached the computer');
    await computer.close();
  }));
