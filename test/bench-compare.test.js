// The benchmark's report formatting (scripts/bench-compare.js): reported, never asserted as a speed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { times } from '../scripts/bench-compare.js';

test('bug: bench --compare printed "nullx" for a ratio it could not take (--cells upstream without probe1: the "vs our probe" column and the goal row)', () => {
  // seen: npm run bench -- --compare --quick --cells probe100,upstream,upstream-own printed
  // "upstream echo C=100 ... nullx n/a"
  assert.equal(times(null), 'n/a');
  assert.equal(times(undefined), 'n/a');
  assert.equal(times(Number.NaN), 'n/a');
  assert.equal(times(1.2345), '1.23x');
  assert.equal(times(0.5), '0.5x');
  assert.equal(times(150.4), '150x');
});
