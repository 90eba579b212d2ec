// Singular counts: messages built from a size or a limit said "at most 1 characters", "wrote 1 bytes",
// "holds more than 1 values", "at most 1 are allowed". One helper (src/plural.ts) makes them all.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { atMostAllowed, plural } from '../dist/plural.js';
import { validate } from '../dist/tools/schema.js';
import { boundsProblem } from '../dist/jsonrpc/bounds.js';
import { renderResult } from '../dist/cli/render.js';
import { adler32 } from '../dist/tools/checksum.js';
import { callTool, linkComputer, rpc, withBridge } from './helpers.js';

const text = (result) => result.content.map((c) => c.text).join('\n');

test('plural: one is singular, any other count (0 too) plural, irregular plurals given', () => {
  assert.equal(plural(1, 'byte'), '1 byte');
  assert.equal(plural(0, 'byte'), '0 bytes');
  assert.equal(plural(2, 'character'), '2 characters');
  assert.equal(plural(1, 'entry', 'entries'), '1 entry');
  assert.equal(plural(5, 'entry', 'entries'), '5 entries');
  assert.equal(atMostAllowed(1), 'at most 1 is allowed');
  assert.equal(atMostAllowed(3), 'at most 3 are allowed');
});

test('singular counts bug: a schema with maxLength 1 said "must be at most 1 characters"', () => {
  assert.equal(validate('ab', { type: 'string', maxLength: 1 }), 'arguments must be at most 1 character');
  assert.equal(validate('abc', { type: 'string', maxLength: 2 }), 'arguments must be at most 2 characters');
  assert.equal(validate('a', { type: 'string', minLength: 2 }), 'arguments must be at least 2 characters');
});

test('singular counts bug: JSON bounds said "more than 1 values" and "deeper than 1 levels"', () => {
  assert.equal(boundsProblem([1, 2], { maxDepth: 64, maxNodes: 1 }), 'holds more than 1 value');
  assert.equal(boundsProblem([[1]], { maxDepth: 1 }), 'nests deeper than 1 level');
  assert.equal(boundsProblem([[[1]]], { maxDepth: 2 }), 'nests deeper than 2 levels');
});

test('singular counts bug: MCP_MAX_BATCH=1 said "at most 1 are allowed"', () =>
  withBridge({ MCP_MAX_BATCH: '1' }, async (bridge) => {
    const res = await rpc(bridge.mcpUrl, [1, 2], { 'mcp-protocol-version': '2025-03-26' });
    assert.equal(res.status, 400);
    assert.equal(res.json.error.message, 'Invalid Request: the batch holds 2 messages; at most 1 is allowed (MCP_MAX_BATCH)');
  }));

test('singular counts bug: write-file of one byte said "wrote 1 bytes"; a one-byte file that is not text said "(1 bytes)"', () =>
  withBridge({}, async (bridge) => {
    const disk = Buffer.from([0xff]);
    await linkComputer(bridge, {
      computerId: 5,
      onRequest: ({ method, params: p }) => {
        if (method === 'read-file') return { ok: true, result: { size: 1, offset: 0, length: 1, checksum: adler32(disk, p.checksum), data: disk.toString('base64') } };
        if (p.verify) return { ok: true, result: { length: p.length, checksum: adler32(Buffer.from('z'), p.checksum) } };
        const data = Buffer.from(p.data, 'base64');
        return { ok: true, result: { written: data.length, size: data.length, checksum: adler32(data, p.checksum) } };
      },
    });
    const wrote = await callTool(bridge, 'write-file', { computerId: 5, path: 'one', content: 'z' });
    assert.match(text(wrote), /^wrote 1 byte to one on computer 5 /);
    const read = await callTool(bridge, 'read-file', { computerId: 5, path: 'bin', encoding: 'text' });
    assert.equal(text(read), 'bin is not valid UTF-8 text (1 byte); read it with "encoding": "base64".');
  }));

test('singular counts bug: job-status said "1 bytes of older output were dropped" and "(1 bytes of output)"', () =>
  withBridge({}, async (bridge) => {
    const job = { job: 'j1', kind: 'run-program', what: 'x', state: 'running', outputBytes: 1, output: 'a', cursor: 1, skipped: 1, more: false };
    await linkComputer(bridge, { computerId: 6, onRequest: ({ params }) => ({ ok: true, result: params.job ? job : { jobs: [job] } }) });
    assert.match(text(await callTool(bridge, 'job-status', { computerId: 6, job: 'j1' })), /^\[1 byte of older output was dropped on the computer\]\na\n/);
    assert.equal(text(await callTool(bridge, 'job-status', { computerId: 6 })), 'j1 run-program running (1 byte of output): x');
  }));

test('singular counts bug: cc-mcp showed a one-byte image as "about 1 bytes"', () => {
  assert.equal(renderResult({ content: [{ type: 'image', mimeType: 'image/png', data: 'AA' }] }), '[image image/png, about 1 byte]');
});
