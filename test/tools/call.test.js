// The shared tool-call path: every way a call can end gets its stable classification, and the
// classification never reaches the JSON a surface sends.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger } from '../../dist/log.js';
import { callTool as callShared } from '../../dist/tools/call.js';
import { FAILURE, classified, failedResult } from '../../dist/tools/tool.js';
import { callTool, linkComputer, rpc, until, withBridge } from '../helpers.js';

const call = (bridge, name, args, signal = new AbortController().signal) =>
  callShared({ ...bridge, log: createLogger('debug', (line) => bridge.logs.push(line)) }, name, args, signal);
const silent = () => null;

test('refusals before the tool runs: unknown_tool, invalid_arguments, disabled', async () => {
  await withBridge({}, async (bridge) => {
    const unknown = await call(bridge, 'nope', {});
    assert.deepEqual(unknown.failure, { code: 'unknown_tool', message: 'Unknown tool: nope' });
    assert.equal(unknown.result.isError, true);
    const bad = await call(bridge, 'exec-lua', { code: 5 });
    assert.equal(bad.failure.code, 'invalid_arguments');
    assert.match(bad.failure.message, /argument "code" must be a string/);
    const notObject = await call(bridge, 'probe-computers', [1]);
    assert.equal(notObject.failure.code, 'invalid_arguments');
    const none = await call(bridge, 'probe-computers', undefined);
    assert.equal(none.failure, null);
    assert.equal(none.result.content[0].text, 'No computers connected.');
  });
  await withBridge({ CC_EXEC_LUA: 'off' }, async (bridge) => {
    const off = await call(bridge, 'exec-lua', { computerId: 1, code: 'x' });
    assert.equal(off.failure.code, 'disabled');
    assert.match(off.result.content[0].text, /disabled on this bridge/);
  });
});

test('exec-lua outcomes: ok, unknown_computer, argument clashes, tool_error, timeout, cancelled, unavailable', () =>
  withBridge({}, async (bridge) => {
    const answers = {
      ok: () => ({ ok: true, result: { output: 'hi\n', returns: [], truncated: false } }),
      fail: () => ({ ok: false, error: 'boom' }),
    };
    const a = await linkComputer(bridge, { computerId: 1, computerLabel: 'twin', onRequest: (f) => answers[f.params.code]?.() ?? null });
    const b = await linkComputer(bridge, { computerId: 2, computerLabel: 'twin', onRequest: silent });

    const ok = await call(bridge, 'exec-lua', { computerId: 1, code: 'ok' });
    assert.equal(ok.failure, null);
    assert.equal(ok.result.content[0].text, 'hi');

    for (const args of [{ computerId: 9, code: 'x' }, { computer: 'twin', code: 'x' }, { computer: 'nobody', code: 'x' }]) {
      const r = await call(bridge, 'exec-lua', args);
      assert.equal(r.failure.code, 'unknown_computer', JSON.stringify(args));
      assert.equal(r.failure.message, r.result.content[0].text);
    }
    for (const args of [{ code: 'x' }, { computerId: 1, computer: 'twin', code: 'x' }]) {
      assert.equal((await call(bridge, 'exec-lua', args)).failure.code, 'invalid_arguments', JSON.stringify(args));
    }

    const failed = await call(bridge, 'exec-lua', { computerId: 1, code: 'fail' });
    assert.equal(failed.failure.code, 'tool_error');
    assert.equal(failed.result.structuredContent.error, 'boom');

    const late = await call(bridge, 'exec-lua', { computerId: 1, code: 'hang', timeoutMs: 20 });
    assert.equal(late.failure.code, 'timeout');
    // the result's text is exec-lua's (`error: ...`); the failure's sentence names the computer
    assert.match(late.result.content[0].text, /^error: timed out after 20 ms; cancel sent\./);
    assert.match(late.failure.message, /^computer 1 \(Label: twin\) did not answer within 20 ms; cancel sent\./);

    const controller = new AbortController();
    const pending = call(bridge, 'exec-lua', { computerId: 1, code: 'hang' }, controller.signal);
    // requests so far: ok, fail, the timed-out hang, and this one
    await until(() => a.received.filter((f) => f.type === 'request').length === 4);
    controller.abort();
    const cancelled = await pending;
    assert.equal(cancelled.failure.code, 'cancelled');
    assert.match(cancelled.failure.message, /^cancelled while waiting for computer 1 \(Label: twin\); cancel sent to the computer\./);

    const dropping = call(bridge, 'exec-lua', { computerId: 2, code: 'hang' });
    await b.next((f) => f.type === 'request');
    await b.close();
    const dropped = await dropping;
    assert.equal(dropped.failure.code, 'unavailable');
    assert.match(dropped.failure.message, /dropped before it answered/);
    await a.close();
  }));

test('a tool that throws is contained as internal; the classification leaks nothing internal', () =>
  withBridge({}, async (bridge) => {
    bridge.tools.setSource({
      id: 'test',
      tools: () => [
        {
          name: 'thrower',
          title: 't',
          description: 't',
          inputSchema: { type: 'object' },
          call: async () => {
            throw new Error('secret detail');
          },
        },
      ],
    });
    const r = await call(bridge, 'thrower', {});
    assert.equal(r.failure.code, 'internal');
    assert.doesNotMatch(r.failure.message, /secret detail/);
    assert.match(r.result.content[0].text, /thrower failed inside the bridge: secret detail/);
    assert.ok(bridge.logs.some((l) => /tool thrower failed: Error: secret detail/.test(l)));
  }));

test('a tool tag is stripped from the result; MCP answers carry no classification', () =>
  withBridge({}, async (bridge) => {
    const tagged = failedResult('gone', 'unavailable');
    assert.equal(tagged[FAILURE], 'unavailable');
    assert.equal(JSON.stringify(tagged), '{"content":[{"type":"text","text":"gone"}],"isError":true}');
    assert.equal(classified({ content: [], isError: true }, 'timeout')[FAILURE], 'timeout');
    bridge.tools.setSource({
      id: 'test',
      tools: () => [{ name: 'tagged', title: 't', description: 't', inputSchema: { type: 'object' }, call: async () => failedResult('gone', 'unavailable') }],
    });
    const r = await call(bridge, 'tagged', {});
    assert.equal(r.failure.code, 'unavailable');
    assert.equal(Object.getOwnPropertySymbols(r.result).length, 0);
    const { text } = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'tagged', arguments: {} } });
    assert.deepEqual(JSON.parse(text).result, { content: [{ type: 'text', text: 'gone' }], isError: true });
    assert.deepEqual(await callTool(bridge, 'tagged', {}), { content: [{ type: 'text', text: 'gone' }], isError: true });
  }));

test("the bridge's own tools have their whole schema enforced (const, multipleOf, minItems ...); an upstream tool (its own definition) only the basics, the rest is its server's to check", () =>
  withBridge({}, async (bridge) => {
    const inputSchema = {
      type: 'object',
      properties: { mode: { const: 'safe' }, step: { type: 'integer', multipleOf: 5 }, tags: { type: 'array', minItems: 1 } },
    };
    const ran = [];
    const tool = (name, definition) => ({ name, title: name, description: name, inputSchema, ...(definition ? { definition } : {}), call: async (args) => (ran.push([name, args]), { content: [{ type: 'text', text: 'ran' }] }) });
    bridge.tools.setSource({ id: 'test', tools: () => [tool('own'), tool('far', { name: 'far', inputSchema })] });
    for (const args of [{ mode: 'unsafe' }, { step: 7 }, { tags: [] }]) {
      const own = await call(bridge, 'own', args);
      assert.equal(own.failure?.code, 'invalid_arguments', JSON.stringify(args));
      assert.equal((await call(bridge, 'far', args)).failure, null, JSON.stringify(args));
    }
    assert.deepEqual(ran.map(([name]) => name), ['far', 'far', 'far']);
  }));
