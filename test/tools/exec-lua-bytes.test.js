// Issue 14, finding 4: a returned string that is not valid UTF-8 arrives as
// {type: "string", base64}; the bridge keeps it exact in structuredContent,
// shows it as a Lua literal in the text, and refuses base64 that is not. Inside a
// returned table such strings (values and keys) are listed in the descriptor's `bytes`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { callTool, linkComputer, withBridge } from '../helpers.js';
import { fromResult, luaByteLiteral } from '../../dist/tools/exec-result.js';
import { loadConfig } from '../../dist/config.js';

/** The limit the bridge passes fromResult: CC_EXEC_MAX_RESULT_VALUES as a bridge with no settings reads it. */
const MAX_VALUES = loadConfig({}).execMaxResultValues;

const b64 = (bytes) => Buffer.from(bytes).toString('base64');

test('luaByteLiteral: ASCII and well-formed UTF-8 as they are, other bytes as \\ddd', () => {
  assert.equal(luaByteLiteral(b64([0xe9])), '"\\233"');
  assert.equal(luaByteLiteral(b64([0x63, 0x61, 0x66, 0xe9, 0x31])), '"caf\\2331"');
  assert.equal(luaByteLiteral(b64([0x80, 0x9f, 0x00, 0x07, 0x7f])), '"\\128\\159\\000\\007\\127"');
  assert.equal(luaByteLiteral(b64([0x22, 0x5c, 0x0a, 0x09, 0x0d])), '"\\"\\\\\\n\\t\\r"');
  // é (C3 A9) and 😀 (F0 9F 98 80) stay characters beside a stray byte
  assert.equal(luaByteLiteral(b64([0xc3, 0xa9, 0xff, 0xf0, 0x9f, 0x98, 0x80])), '"é\\255😀"');
  // not well-formed: overlong, surrogate, past U+10FFFF, cut short
  assert.equal(luaByteLiteral(b64([0xc0, 0xaf])), '"\\192\\175"');
  assert.equal(luaByteLiteral(b64([0xe0, 0x80, 0x80])), '"\\224\\128\\128"');
  assert.equal(luaByteLiteral(b64([0xed, 0xa0, 0x80])), '"\\237\\160\\128"');
  assert.equal(luaByteLiteral(b64([0xf4, 0x90, 0x80, 0x80])), '"\\244\\144\\128\\128"');
  assert.equal(luaByteLiteral(b64([0xf0, 0x9f, 0x98])), '"\\240\\159\\152"');
  assert.equal(luaByteLiteral(b64([0xe2, 0x82])), '"\\226\\130"');
  assert.equal(luaByteLiteral(''), '""');
});

test('fromResult: base64 must be base64 text', () => {
  const check = (base64) => fromResult({ output: '', returns: [{ type: 'string', base64 }], truncated: false }, MAX_VALUES);
  assert.equal(check('6Q==').ok, true);
  assert.equal(check('').ok, true);
  assert.deepEqual(check(5), { ok: false, problem: '"returns"[0].base64 is a number' });
  for (const bad of ['6Q=', '*Q==', '6Q==6Q==', 'abc']) {
    assert.deepEqual(check(bad), { ok: false, problem: '"returns"[0].base64 is not base64 text' }, bad);
  }
});

test('exec-lua: a base64 descriptor is passed on exactly and rendered as a Lua literal', () =>
  withBridge({}, async (bridge) => {
    const returns = [{ type: 'string', base64: b64([0x63, 0xe9]) }, { type: 'string', value: 'é' }];
    const c = await linkComputer(bridge, { computerId: 1, onRequest: () => ({ ok: true, result: { output: '', returns, truncated: false } }) });
    const res = await callTool(bridge, 'exec-lua', { computerId: 1, code: 'return "c\\233", "é"' });
    assert.equal(res.isError, undefined);
    assert.equal(res.content[0].text, '=> "c\\233", "é"');
    assert.deepEqual(res.structuredContent.returns, returns);
    await c.close();
  }));

test('fromResult: a table\'s "bytes" list is checked', () => {
  const check = (bytes, type = 'table') => fromResult({ output: '', returns: [{ type, value: {}, bytes }], truncated: false }, MAX_VALUES);
  assert.equal(check([]).ok, true);
  assert.equal(check([{ path: ['a', 0], base64: '6Q==' }, { path: ['\\233'], base64: '6Q==', key: true, truncated: false }]).ok, true);
  const problems = [
    [[{ path: ['a'], base64: '6Q==' }], 'string', '"returns"[0].bytes is only for a table'],
    [{}, 'table', '"returns"[0].bytes is an object, not an array'],
    [[5], 'table', '"returns"[0].bytes[0] is a number, not an object'],
    [[{ path: 'a', base64: '6Q==' }], 'table', '"returns"[0].bytes[0].path is not a list of keys and array positions'],
    [[{ path: [-1], base64: '6Q==' }], 'table', '"returns"[0].bytes[0].path is not a list of keys and array positions'],
    [[{ path: [1.5], base64: '6Q==' }], 'table', '"returns"[0].bytes[0].path is not a list of keys and array positions'],
    [[{ path: [null], base64: '6Q==' }], 'table', '"returns"[0].bytes[0].path is not a list of keys and array positions'],
    [[{ path: ['a'] }], 'table', '"returns"[0].bytes[0].base64 is missing'],
    [[{ path: ['a'], base64: 7 }], 'table', '"returns"[0].bytes[0].base64 is a number'],
    [[{ path: ['a'], base64: '6Q=' }], 'table', '"returns"[0].bytes[0].base64 is not base64 text'],
    [[{ path: ['a'], base64: '6Q==', key: false }], 'table', '"returns"[0].bytes[0].key is a boolean, not true'],
    [[{ path: [], base64: '6Q==', key: true }], 'table', '"returns"[0].bytes[0] is a key with an empty path'],
    [[{ path: ['a'], base64: '6Q==', truncated: 'yes' }], 'table', '"returns"[0].bytes[0].truncated is a string, not a boolean'],
  ];
  for (const [bytes, type, problem] of problems) assert.deepEqual(check(bytes, type), { ok: false, problem }, problem);
});

test('exec-lua: a table with byte strings is passed on exactly, its copy shows their Lua literal bodies', () =>
  withBridge({}, async (bridge) => {
    const table = { type: 'table', value: { '\\233': 'caf\\233', é: 'é' }, bytes: [{ path: ['\\233'], base64: b64([0xe9]), key: true }, { path: ['\\233'], base64: b64([0x63, 0x61, 0x66, 0xe9]) }] };
    const c = await linkComputer(bridge, { computerId: 1, onRequest: () => ({ ok: true, result: { output: '', returns: [table], truncated: false } }) });
    const res = await callTool(bridge, 'exec-lua', { computerId: 1, code: 'return { ["\\233"] = "caf\\233", ["é"] = "é" }' });
    assert.equal(res.isError, undefined);
    assert.equal(res.content[0].text, '=> {"\\\\233":"caf\\\\233","é":"é"}');
    assert.deepEqual(res.structuredContent.returns, [table]);
    await c.close();
  }));

test('fromResult: CC_EXEC_MAX_RESULT_VALUES bounds the returned values, a table\'s "bytes" list included', () => {
  // values counted: the returns list, the descriptor, its keys, then each array item
  const table = (items, bytes) => ({ type: 'table', value: new Array(items).fill(0), ...(bytes ? { bytes } : {}) });
  const check = (descriptor) => fromResult({ output: '', returns: [descriptor], truncated: false }, MAX_VALUES);
  const over = { ok: false, problem: `"returns" holds more than ${MAX_VALUES} values (CC_EXEC_MAX_RESULT_VALUES)` };
  assert.equal(MAX_VALUES, 100_000);
  assert.equal(check(table(MAX_VALUES - 4)).ok, true);
  assert.deepEqual(check(table(MAX_VALUES - 3)), over);
  assert.equal(check(table(MAX_VALUES - 5, [])).ok, true);
  assert.deepEqual(check(table(MAX_VALUES - 5, [{ path: [], base64: '' }])), over);
  // the limit is the one given: the same answer passes a larger one
  assert.equal(fromResult({ output: '', returns: [table(MAX_VALUES - 3)] }, MAX_VALUES + 1).ok, true);
});
