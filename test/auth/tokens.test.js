// Token checks: constant-time over fixed-length digests, every token compared on every check.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { timingSafeEqual } from 'node:crypto';
import { TokenSet, bearerToken, splitTokens, tokenProblem } from '../../dist/auth/tokens.js';

const A = 'a'.repeat(32);
const B = 'b'.repeat(40);
const C = 'c'.repeat(16);

/** A TokenSet whose comparisons are recorded (argument lengths and how many). */
function watched(tokens) {
  const calls = [];
  const set = new TokenSet(tokens, (x, y) => {
    calls.push([x.length, y.length]);
    return timingSafeEqual(x, y);
  });
  return { set, calls };
}

test('matches any configured token and nothing else', () => {
  const set = new TokenSet([A, B, C]);
  assert.equal(set.enabled, true);
  for (const t of [A, B, C]) assert.equal(set.matches(t), true, t);
  for (const t of ['', null, undefined, A.slice(1), A + 'a', A.toUpperCase(), 'x'.repeat(32)]) assert.equal(set.matches(t), false, String(t));
});

test('an empty set is disabled and matches nothing, not even an empty token', () => {
  const set = new TokenSet([]);
  assert.equal(set.enabled, false);
  assert.equal(set.matches(''), false);
  assert.equal(set.matches(A), false);
});

test('no early exit: every token is compared on every check, whichever one matches', () => {
  const { set, calls } = watched([A, B, C]);
  for (const presented of [A, B, C, 'wrong-token-wrong-token', '', null]) {
    calls.length = 0;
    set.matches(presented);
    assert.equal(calls.length, 3, `three comparisons for ${presented}`);
  }
});

test('the comparison always runs over two 32-byte digests, whatever the lengths presented', () => {
  const { set, calls } = watched([A, B]);
  for (const presented of ['x', A.slice(0, 31), A, 'y'.repeat(10_000)]) {
    calls.length = 0;
    set.matches(presented);
    assert.deepEqual(calls, [[32, 32], [32, 32]]);
  }
});

test('bearerToken reads the Bearer scheme only, case-insensitively', () => {
  assert.equal(bearerToken(`Bearer ${A}`), A);
  assert.equal(bearerToken(`bearer   ${A}  `), A);
  assert.equal(bearerToken(`BEARER ${A}`), A);
  assert.equal(bearerToken(undefined), null);
  assert.equal(bearerToken(''), null);
  assert.equal(bearerToken(`Basic ${A}`), null);
  assert.equal(bearerToken('Bearer'), null);
  assert.equal(bearerToken(`Bearer ${A} extra`), null);
});

test('splitTokens takes commas, spaces and newlines; tokenProblem names what is wrong', () => {
  assert.deepEqual(splitTokens(` ${A},${B}\n${C}\r\n\n`), [A, B, C]);
  assert.deepEqual(splitTokens(''), []);
  assert.equal(tokenProblem(A), null);
  assert.match(tokenProblem('short'), /at least 16/);
  assert.match(tokenProblem('é'.repeat(20)), /printable ASCII/);
});

test('tokenProblem at its edges: 16 characters is enough, 15 is not; a comma or a space is refused (a list could never hold it); every other printable ASCII character is taken', () => {
  assert.equal(tokenProblem('x'.repeat(16)), null);
  assert.match(tokenProblem('x'.repeat(15)), /at least 16 characters/);
  for (const c of [',', ' ', '\t', '\x7f', '\x00']) assert.match(tokenProblem(`${'x'.repeat(20)}${c}`), /printable ASCII without spaces or commas/, JSON.stringify(c));
  const printable = Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i)).filter((c) => c !== ',').join('');
  assert.equal(tokenProblem(printable), null);
});

test('tokenIdentity: "token:" and the first 16 hex digits (64 bits) of the token\'s SHA-256, never the token', async () => {
  const { tokenIdentity } = await import('../../dist/auth/tokens.js');
  const { createHash } = await import('node:crypto');
  assert.equal(tokenIdentity(A), `token:${createHash('sha256').update(A).digest('hex').slice(0, 16)}`);
  assert.match(tokenIdentity(B), /^token:[0-9a-f]{16}$/);
  assert.notEqual(tokenIdentity(A), tokenIdentity(B));
});
