// The safe-tool framework on the bridge side, against fake computers (real WebSocket clients): every
// way a method call can end, malformed answers, hello.maxFrame, and the update hint.
import { test } from 'node:test';
import { request } from 'node:http';
import assert from 'node:assert/strict';
import { callTool, linkComputer, withBridge, FakeComputer } from '../helpers.js';
import { answerSchema, updateHint } from '../../dist/tools/safe-tool.js';
import { BUILTIN_TOOLS } from '../../dist/tools/builtins.js';

const text = (result) => result.content.map((c) => c.text).join('\n');

test('safe tools are offered with CC_EXEC_LUA=off, with readOnly/destructive annotations', () =>
  withBridge({ CC_EXEC_LUA: 'off' }, async (bridge) => {
    const names = bridge.tools.list().map((t) => t.name);
    assert.ok(!names.includes('exec-lua'));
    for (const name of ['list-files', 'delete-file', 'move-file']) assert.ok(names.includes(name), name);
    const byName = Object.fromEntries(bridge.tools.list().map((t) => [t.name, t]));
    assert.equal(byName['list-files'].annotations.readOnlyHint, true);
    assert.equal(byName['delete-file'].annotations.destructiveHint, true);
    assert.equal(byName['move-file'].annotations.readOnlyHint, false);
    assert.deepEqual(byName['delete-file'].inputSchema.required, ['path']);
  }));

test('the computer is named as for exec-lua: unknown id, no choice, both given', () =>
  withBridge({}, async (bridge) => {
    await linkComputer(bridge, { computerId: 1 });
    const none = await callTool(bridge, 'list-files', { computerId: 42 });
    assert.equal(none.isError, true);
    assert.match(text(none), /^No linked computer has id 42\. Linked computers: 1 \(Label: null\)\.$/);
    assert.match(text(await callTool(bridge, 'list-files', {})), /^Say which computer/);
    assert.match(text(await callTool(bridge, 'list-files', { computerId: 1, computer: 'x' })), /^Give either/);
  }));

test('timeout, dropped link and the computer\'s own error each become a clear error result', () =>
  withBridge({ CC_EXEC_TIMEOUT_MS: '200' }, async (bridge) => {
    let mode = 'silent';
    const fake = await linkComputer(bridge, {
      computerId: 2,
      computerLabel: 'two',
      onRequest: (frame) => {
        if (mode === 'silent') return null;
        if (mode === 'error') return { ok: false, error: '/x: Not a directory' };
        if (mode === 'drop') {
          fake.ws.terminate();
          return null;
        }
        return { ok: true, result: { entries: 'no' } };
      },
    });
    assert.equal(text(await callTool(bridge, 'list-files', { computerId: 2 })), 'computer 2 (Label: two) did not answer list-files within 200 ms (CC_EXEC_TIMEOUT_MS).');
    mode = 'error';
    const err = await callTool(bridge, 'list-files', { computerId: 2, path: 'x' });
    assert.equal(err.isError, true);
    assert.equal(text(err), '/x: Not a directory');
    mode = 'bad';
    assert.equal(text(await callTool(bridge, 'list-files', { computerId: 2 })), 'protocol error: computer 2 (Label: two) sent a malformed list-files result: no "entries" list');
    mode = 'drop';
    assert.match(text(await callTool(bridge, 'delete-file', { computerId: 2, path: 'a' })), /^the link to computer 2 \(Label: two\) dropped before it answered/);
  }));

test('list-files: malformed entries and pieces that do not move forward are protocol errors', () =>
  withBridge({}, async (bridge) => {
    const answers = [];
    await linkComputer(bridge, { computerId: 3, onRequest: () => ({ ok: true, result: answers.shift() }) });
    const bad = async (result, problem) => {
      answers.push(result);
      const r = await callTool(bridge, 'list-files', { computerId: 3 });
      assert.equal(r.isError, true);
      assert.equal(text(r), `protocol error: computer 3 (Label: null) sent a malformed list-files result: ${problem}`);
    };
    await bad({ entries: [1] }, 'an entry is not an object');
    await bad({ entries: [{ name: 2 }] }, 'an entry has no string "name"');
    await bad({ entries: [{ name: 'a', isDir: 'no', isReadOnly: false }] }, 'entry "a" lacks isDir/isReadOnly booleans');
    await bad({ entries: [{ name: 'a', isDir: false, isReadOnly: false, size: -1 }] }, 'entry "a" has a bad size');
    await bad({ entries: [], next: 0 }, '"next" does not move forward');
    // a computer that says nothing about free space or its path still gets a listing
    answers.push({ entries: [{ name: 'f', isDir: false, isReadOnly: true, size: 1 }], freeSpace: 'unlimited' });
    const ok = await callTool(bridge, 'list-files', { computerId: 3 });
    assert.equal(text(ok), '/: 1 entry, unlimited free space\nf  1 byte  [read-only]');
    assert.equal(ok.structuredContent.freeSpace, 'unlimited');
  }));

test('list-files stops at 10,000 entries and says the folder has more', () =>
  withBridge({}, async (bridge) => {
    await linkComputer(bridge, {
      computerId: 4,
      onRequest: (frame) => {
        const from = frame.params.offset ?? 0;
        const entries = Array.from({ length: 2500 }, (_, i) => ({ name: `f${from + i}`, isDir: false, isReadOnly: false, size: 0 }));
        return { ok: true, result: { path: '/big', entries, next: from + 2500, total: 20000, isReadOnly: false, freeSpace: 5 } };
      },
    });
    const r = await callTool(bridge, 'list-files', { computerId: 4, path: 'big' });
    assert.equal(r.structuredContent.entries.length, 10000);
    assert.equal(r.structuredContent.truncated, true);
    assert.match(text(r), /\[only the first 10000 entries; the folder has 20000\]$/);
  }));

test('hello.maxFrame bounds the requests sent to that computer; a bad one refuses the hello', () =>
  withBridge({}, async (bridge) => {
    const small = new FakeComputer(bridge.linkUrl, { computerId: 5, onRequest: () => ({ ok: true, result: {} }) });
    assert.equal((await small.link({ type: 'hello', computerId: 5, maxFrame: 1024 })).type, 'hello-ok');
    const r = await callTool(bridge, 'move-file', { computerId: 5, from: 'a'.repeat(600), to: 'b'.repeat(600) });
    assert.equal(r.isError, true);
    assert.match(text(r), /^The request is too large to send: request is \d+ bytes encoded; the computer accepts at most 1024\.$/);
    const bad = new FakeComputer(bridge.linkUrl, { computerId: 6 });
    const answer = await bad.link({ type: 'hello', computerId: 6, maxFrame: 12 });
    assert.deepEqual(answer, { type: 'hello-error', error: 'hello.maxFrame must be an integer >= 1024', code: 'invalid' });
  }));

test('the update hint names the link port when it is fixed', () => {
  assert.match(updateHint(3001), /"wget http:\/\/<bridge-host>:3001\/mcp-computer\.lua mcp-computer\.lua"/);
  assert.match(updateHint(0), /<link port>/);
});

test('a client that goes away mid-transfer cancels it: the computer gets a cancel and no further piece', () =>
  withBridge({}, async (bridge) => {
    const c = await linkComputer(bridge, { computerId: 7, onRequest: () => null });
    const req = request(new URL(bridge.mcpUrl.replace(/\/mcp$/, '/tools/read-file')), { method: 'POST', headers: { 'content-type': 'application/json' } });
    req.on('error', () => {});
    req.end(JSON.stringify({ computerId: 7, path: 'big.bin' }));
    const sent = await c.next((f) => f.type === 'request');
    assert.equal(sent.method, 'read-file');
    req.destroy();
    assert.deepEqual(await c.next((f) => f.type === 'cancel'), { type: 'cancel', id: sent.id });
    assert.equal(c.received.filter((f) => f.type === 'request').length, 1);
    await c.close();
  }));

test('answerSchema: computerId first, every field required but the optional ones, in the order given', () => {
  assert.deepEqual(answerSchema({ b: { type: 'string' }, a: { type: 'boolean' }, c: { type: 'integer' } }, ['a']), {
    type: 'object',
    properties: { computerId: { type: 'integer' }, b: { type: 'string' }, a: { type: 'boolean' }, c: { type: 'integer' } },
    required: ['computerId', 'b', 'c'],
  });
  // every tool on one computer answers with its computerId, and requires only fields it declares
  for (const tool of BUILTIN_TOOLS.filter((t) => 'computerId' in (t.inputSchema.properties ?? {}) && t.name !== 'exec-lua')) {
    assert.deepEqual(Object.keys(tool.outputSchema.properties)[0], 'computerId', tool.name);
    assert.equal(tool.outputSchema.required[0], 'computerId', tool.name);
    for (const name of tool.outputSchema.required) assert.ok(name in tool.outputSchema.properties, `${tool.name}: ${name}`);
  }
});
