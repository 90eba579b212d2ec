// The pure core of the per-client stream limits (shares.ts): a client over its own cap replaces its
// oldest; at the total a newcomer takes from the client holding at least two more than it would, or
// (ownFirst) from itself; unnamed items count in the total and are never grouped; entries go away
// with a client's last item.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Shares } from '../../dist/mcp/shares.js';

test('a client over its own cap replaces its oldest; others are not touched', () => {
  const shares = new Shares({ max: 100, perClient: 2, ownFirst: false });
  shares.add('a', 'a1');
  shares.add('a', 'a2');
  shares.add('b', 'b1');
  assert.deepEqual(shares.admit('a'), { kind: 'replace', victim: 'a1', why: 'client', held: 2 });
  assert.deepEqual(shares.admit('b'), { kind: 'open' });
  assert.deepEqual(shares.admit(null), { kind: 'open' });
  assert.deepEqual(shares.itemsOf('a'), ['a1', 'a2']);
  assert.deepEqual(shares.itemsOf('nobody'), []);
  assert.deepEqual(shares.itemsOf(null), []);
});

test('at the total: the client holding at least two more than the newcomer would gives up its oldest; otherwise refused; unnamed items are never taken', () => {
  const shares = new Shares({ max: 4, perClient: 10, ownFirst: false });
  shares.add('hog', 'h1');
  shares.add('hog', 'h2');
  shares.add(null, 'n1');
  shares.add(null, 'n2');
  assert.equal(shares.size, 4);
  // a newcomer (0) against 2: taken from the hog
  assert.deepEqual(shares.admit('new'), { kind: 'replace', victim: 'h1', why: 'total', held: 2 });
  assert.deepEqual(shares.admit(null), { kind: 'replace', victim: 'h1', why: 'total', held: 2 });
  // the hog itself is refused (no self-replacement without ownFirst), and 1 against 2 is a fair share
  assert.deepEqual(shares.admit('hog'), { kind: 'refuse' });
  assert.equal(shares.remove('hog', 'h1'), true);
  shares.add('one', 'o1');
  assert.deepEqual(shares.admit('one'), { kind: 'refuse' });
  assert.deepEqual(shares.admit('new'), { kind: 'refuse' });
  // only unnamed items: nothing to take
  const anon = new Shares({ max: 1, perClient: 10, ownFirst: false });
  anon.add(null, 'x');
  assert.deepEqual(anon.admit(null), { kind: 'refuse' });
  assert.deepEqual(anon.admit('a'), { kind: 'refuse' });
});

test('ownFirst: at the total a client holding any replaces its own oldest before taking from others', () => {
  const shares = new Shares({ max: 3, perClient: 10, ownFirst: true });
  shares.add('a', 'a1');
  shares.add('b', 'b1');
  shares.add('b', 'b2');
  assert.deepEqual(shares.admit('a'), { kind: 'replace', victim: 'a1', why: 'own', held: 1 });
  assert.deepEqual(shares.admit('c'), { kind: 'replace', victim: 'b1', why: 'total', held: 2 });
});

test('remove: each item once (false after), counts follow, a client entry goes with its last item', () => {
  const shares = new Shares({ max: 10, perClient: 10, ownFirst: false });
  shares.add('a', 'a1');
  shares.add(null, 'n1');
  assert.equal(shares.clientCount, 1);
  assert.equal(shares.held('a'), 1);
  assert.equal(shares.held(null), 0);
  assert.equal(shares.remove('a', 'a1'), true);
  assert.equal(shares.remove('a', 'a1'), false);
  assert.equal(shares.remove('b', 'b1'), false);
  assert.equal(shares.remove(null, 'n1'), true);
  assert.equal(shares.remove(null, 'n1'), false);
  assert.equal(shares.size, 0);
  assert.equal(shares.clientCount, 0);
});

test('at the total with two clients holding the most alike, the one that has held items longer gives up its oldest (found by mutation testing: the later one passed every test)', () => {
  const shares = new Shares({ max: 4, perClient: 10, ownFirst: false });
  shares.add('first', 'f1');
  shares.add('second', 's1');
  shares.add('first', 'f2');
  shares.add('second', 's2');
  assert.deepEqual(shares.admit('new'), { kind: 'replace', victim: 'f1', why: 'total', held: 2 });
  // once 'first' has gone and come back, 'second' is the longer holder
  shares.remove('first', 'f1');
  shares.remove('first', 'f2');
  shares.add('first', 'f3');
  shares.add('first', 'f4');
  assert.deepEqual(shares.admit('new'), { kind: 'replace', victim: 's1', why: 'total', held: 2 });
});
