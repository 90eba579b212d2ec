// Bridge names for upstream tools: kept when they fit, escaped reversibly when not, cut with a hash past 64.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bridgeToolName, decodeToolName, encodeToolName } from '../../dist/upstream/names.js';

test('a name that fits is kept; others are escaped and decode back', () => {
  assert.equal(bridgeToolName('files', 'read_file'), 'files__read_file');
  assert.equal(bridgeToolName('files', 'read-file'), 'files__read-file');
  for (const [name, encoded] of [
    ['files.read', 'files-2e-read'],
    ['a/b', 'a-2f-b'],
    ['café', 'caf-e9-'],
    ['🐢 go', '-1f422--20-go'],
    ['x:y@z', 'x-3a-y-40-z'],
  ]) {
    assert.equal(encodeToolName(name), encoded);
    assert.match(encoded, /^[A-Za-z0-9_-]+$/);
    assert.equal(decodeToolName(encoded), name);
  }
  assert.equal(decodeToolName('a-110000-b'), 'a-110000-b', 'past the last code point: left as it is');
});

test('past 64 characters the name is cut and ends in a hash of the full name, so it stays unique', () => {
  const a = bridgeToolName('server', 'x'.repeat(100));
  const b = bridgeToolName('server', `${'x'.repeat(99)}y`);
  assert.equal(a.length, 64);
  assert.equal(b.length, 64);
  assert.notEqual(a, b);
  assert.match(a, /^server__x+-[0-9a-f]{8}$/);
  assert.equal(bridgeToolName('s', 'y'.repeat(61)).length, 64, 'exactly 64 is kept whole');
  assert.equal(bridgeToolName('s', 'y'.repeat(61)), `s__${'y'.repeat(61)}`);
});

test('the last code point, U+10FFFF, is escaped and decodes back; one past it is left as it is (found by mutation testing)', () => {
  assert.equal(encodeToolName('a\u{10ffff}b'), 'a-10ffff-b');
  assert.equal(decodeToolName('a-10ffff-b'), 'a\u{10ffff}b');
  assert.equal(decodeToolName('a-110000-b'), 'a-110000-b');
});
