// The benchmark's report formatting (scripts/bench-compare.js): reported, never asserted as a speed.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
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

const BENCH = fileURLToPath(new URL('../scripts/bench.js', import.meta.url));
// Kills what an old build would start (a whole run of bridges): the test does not wait for it.
const runBench = (args) => spawnSync(process.execPath, [BENCH, ...args], { encoding: 'utf8', timeout: 30_000, killSignal: 'SIGKILL' });

test('bug: bench --compare --help started a whole benchmark run instead of printing its options', { timeout: 60_000 }, () => {
  for (const args of [['--compare', '--help'], ['--help'], ['-h']]) {
    const r = runBench(args);
    assert.equal(r.status, 0, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stdout, /^Usage: npm run bench -- \[options\]/);
    for (const option of ['--seconds S', '--warmup S', '--rounds R', '--links K', '--cells LIST', '--baseline FILE', '--no-upstream']) {
      assert.ok(r.stdout.includes(option), `${args.join(' ')}: ${option} missing`);
    }
  }
});

test('bug: bench --compare ignored a mistyped option (--round 5 ran the default rounds)', { timeout: 60_000 }, () => {
  const r = runBench(['--compare', '--round', '5']);
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /^bench --compare: Unknown option '--round'/);
  assert.match(r.stderr, /--rounds R/);
  assert.equal(r.stdout, '');
});
