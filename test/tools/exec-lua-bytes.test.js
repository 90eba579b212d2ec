// Issue 14, finding 4: a returned string that is not valid UTF-8 arrives as
// {type: "string", base64}; the bridge keeps it exact in structuredContent,
// shows it as a Lua literal in the text, and refuses base64 that is not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { callTool, linkComputer, withBridge } from '../helpers.js';
import { fromResult, luaByteLiteral } from '../../dist/tools/exec-lua.js';

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
  const check = (base64) => fromResult({ output: '', returns: [{ type: 'string', base64 }], truncated: false });
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
