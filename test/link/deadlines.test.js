// Single requests' timeouts share one node timer per timeout length (src/link/deadlines.ts). Only
// orders and outcomes are checked, never how long anything took.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTimeout, stopTimeout, deadlineLists } from '../../dist/link/deadlines.js';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function until(done) {
  for (let i = 0; i < 2000 && !done(); i++) await sleep(5);
}

function item(name, ended) {
  return { name, deadline: 0, prevTimed: null, nextTimed: null, timedList: null, timedOut: () => ended.push(name) };
}

test('each item times out once, not before its deadline; a list ends its items oldest first; a stopped one never does', async () => {
  const ended = [];
  const a = item('a', ended);
  const b = item('b', ended);
  const c = item('c', ended);
  const d = item('d', ended);
  startTimeout(a, 30);
  startTimeout(b, 30);
  startTimeout(c, 60);
  await sleep(5);
  startTimeout(d, 30);
  stopTimeout(b);
  stopTimeout(b); // twice: nothing
  assert.equal(deadlineLists(), 2);
  await until(() => ended.length === 3);
  assert.deepEqual([...ended].sort(), ['a', 'c', 'd']);
  assert.ok(ended.indexOf('a') < ended.indexOf('d'));
  // every list emptied, so no timer is left to keep the process up
  assert.equal(deadlineLists(), 0);
  await sleep(40);
  assert.equal(ended.length, 3);
});

test('a request started by a timed-out one joins the list and still times out; odd delays are 1 ms, as setTimeout takes them', async () => {
  const ended = [];
  const second = item('second', ended);
  const first = { ...item('first', ended), timedOut: () => { ended.push('first'); startTimeout(second, 20); } };
  startTimeout(first, 20);
  await until(() => ended.length === 2);
  assert.deepEqual(ended, ['first', 'second']);
  for (const odd of [0, -5, Number.NaN, 2 ** 40]) startTimeout(item(String(odd), ended), odd);
  assert.equal(deadlineLists(), 1);
  await until(() => ended.length === 6);
  assert.deepEqual(ended.slice(2), ['0', '-5', 'NaN', String(2 ** 40)]);
  assert.equal(deadlineLists(), 0);
});

test('stopping the only item drops its list and timer; many items in one list end in order', async () => {
  const ended = [];
  const lone = item('lone', ended);
  startTimeout(lone, 10_000);
  assert.equal(deadlineLists(), 1);
  stopTimeout(lone);
  assert.equal(deadlineLists(), 0);
  const many = Array.from({ length: 50 }, (_, i) => item(i, ended));
  for (const m of many) startTimeout(m, 15);
  for (const m of many.filter((_, i) => i % 2)) stopTimeout(m);
  await until(() => ended.length === 25);
  assert.deepEqual(ended, many.filter((_, i) => i % 2 === 0).map((m) => m.name));
  assert.equal(deadlineLists(), 0);
});

test('a list re-arms for its next item\'s own deadline, not a whole timeout later: that item ends before a later deadline of another list', async () => {
  const ended = [];
  const first = item('first', ended);
  const second = item('second', ended);
  const witness = item('witness', ended);
  startTimeout(first, 400);
  await sleep(100);
  // second is due about 100 ms after first, witness 200 ms after second: re-arming the 400 ms list a
  // whole 400 ms after first would end second about 300 ms after its deadline, after witness (only
  // the order is checked: a slow machine delays all three alike)
  startTimeout(second, 400);
  startTimeout(witness, 600);
  await until(() => ended.length === 3);
  assert.deepEqual(ended, ['first', 'second', 'witness']);
});
