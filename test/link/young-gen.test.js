// CC_LINK_YOUNG_GEN_MB: while computers link, V8's young generation grows no larger than the bound,
// and grows as usual again once handshakes stop. Heap sizes are checked in fresh child processes
// (a test process's young generation has grown already); no timing is asserted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { linkComputer, until, withBridge } from '../helpers.js';
import { youngGenerationHeld } from '../../dist/link/young-gen-hold.js';

const HOLD = fileURLToPath(new URL('../../dist/link/young-gen-hold.js', import.meta.url));
const MiB = 1024 * 1024;

// Allocates ~40 MB that all survives, as linking does, with a handshake every 500 objects, then
// again with none once the quiet period is over; prints the young generation's size at the start and
// after each round.
const CHILD = `
import { getHeapSpaceStatistics } from 'node:v8';
const { boundYoungGeneration, youngGenerationHeld, QUIET_MS } = await import(${JSON.stringify(HOLD)});
const young = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
const keep = [];
const survive = (handshake) => {
  for (let i = 0; i < 400000; i++) {
    if (handshake && i % 500 === 0) handshake();
    keep.push({ id: i, text: 'x' + i, list: [i] });
  }
};
const start = young();
survive(() => boundYoungGeneration(Number(process.argv[1])));
const during = young();
const held = youngGenerationHeld();
await new Promise((r) => setTimeout(r, QUIET_MS + 50));
const released = !youngGenerationHeld();
survive();
console.log(JSON.stringify({ start, during, held, released, after: young() }));
`;

function run(maxBytes, nodeArgs = []) {
  const r = spawnSync(process.execPath, [...nodeArgs, '--input-type=module', '-e', CHILD, String(maxBytes)], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

test('unbounded (0), the surviving allocation grows the young generation: the bound below has something to stop', () => {
  const r = run(0);
  assert.equal(r.held, false);
  assert.ok(r.during >= 4 * r.start, JSON.stringify(r));
});

test('bounded: no growth past the bound while held; growth again once the handshakes stopped', () => {
  // a bound below V8's smallest young generation (2 MiB once it has grown at all) holds it there
  const none = run(1);
  assert.equal(none.held, true);
  assert.ok(none.during <= 2 * MiB, JSON.stringify(none));
  assert.equal(none.released, true);
  assert.ok(none.after > none.during, JSON.stringify(none));
  const eight = run(8 * MiB);
  assert.ok(eight.during <= 8 * MiB && eight.during > eight.start, JSON.stringify(eight));
});

test('an operator who sets the semi-space with V8 flags keeps it: nothing is held', () => {
  const r = run(1, ['--max-semi-space-size=16']);
  assert.equal(r.held, false);
  assert.ok(r.during > r.start, JSON.stringify(r));
});

test('the link listener bounds it at each handshake (CC_LINK_YOUNG_GEN_MB), and not when it is 0', async () => {
  await withBridge({ CC_LINK_YOUNG_GEN_MB: '0' }, async (bridge) => {
    const computer = await linkComputer(bridge, { computerId: 1 });
    assert.equal(youngGenerationHeld(), false);
    await computer.close();
  });
  // 1 MiB: smaller than any young generation, so the first handshake holds it
  await withBridge({ CC_LINK_YOUNG_GEN_MB: '1' }, async (bridge) => {
    const computer = await linkComputer(bridge, { computerId: 2 });
    assert.equal(youngGenerationHeld(), true);
    await until(() => !youngGenerationHeld());
    await computer.close();
  });
});
