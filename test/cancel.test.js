// Cancellation (src/cancel.ts): the flag and listener list the call path uses instead of an
// AbortController per request and per call.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { Cancellation } from '../dist/cancel.js';

test('abort runs each listener once, in the order added; later aborts and adds do nothing', () => {
  const c = new Cancellation();
  const seen = [];
  const a = () => seen.push('a');
  const b = () => seen.push('b');
  const d = () => seen.push('d');
  c.addEventListener('abort', a);
  c.addEventListener('abort', b, { once: true });
  c.addEventListener('abort', a); // a duplicate is ignored, as on an EventTarget
  c.addEventListener('abort', d);
  assert.equal(c.aborted, false);
  c.abort();
  c.abort();
  assert.equal(c.aborted, true);
  assert.deepEqual(seen, ['a', 'b', 'd']);
  c.addEventListener('abort', a);
  c.abort();
  assert.deepEqual(seen, ['a', 'b', 'd']);
});

test('a removed listener does not run, whichever position it held', () => {
  for (const gone of [0, 1, 2]) {
    const c = new Cancellation();
    const seen = [];
    const fns = [0, 1, 2].map((i) => () => seen.push(i));
    for (const fn of fns) c.addEventListener('abort', fn);
    c.removeEventListener('abort', fns[gone]);
    c.removeEventListener('abort', () => {}); // unknown: nothing happens
    c.abort();
    assert.deepEqual(seen, [0, 1, 2].filter((i) => i !== gone));
  }
  const c = new Cancellation();
  const seen = [];
  const x = () => seen.push('x');
  c.addEventListener('abort', x);
  c.removeEventListener('abort', x);
  c.addEventListener('abort', () => seen.push('y'));
  c.abort();
  assert.deepEqual(seen, ['y']);
});

test('a listener that throws does not keep the others from running; the error is reported as uncaught', () => {
  // in a child process: node:test takes an uncaught exception as the test's failure
  const script = `
    import { Cancellation } from ${JSON.stringify(new URL('../dist/cancel.js', import.meta.url).href)};
    process.on('uncaughtException', (err) => console.log('uncaught ' + err.message));
    const c = new Cancellation();
    c.addEventListener('abort', () => { throw new Error('boom'); });
    c.addEventListener('abort', () => console.log('after'));
    c.abort();
    console.log('aborted');`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.deepEqual(out.trim().split('\n'), ['after', 'aborted', 'uncaught boom']);
});

test('linked: aborted with its parent (a Cancellation or an AbortSignal), at once if the parent already is; dispose unlinks', () => {
  for (const make of [() => new Cancellation(), () => new AbortController()]) {
    const parent = make();
    const signal = parent instanceof AbortController ? parent.signal : parent;
    const one = Cancellation.linked(signal);
    const two = Cancellation.linked(signal);
    const disposed = Cancellation.linked(signal);
    disposed.dispose();
    const seen = [];
    one.addEventListener('abort', () => seen.push('one'));
    two.addEventListener('abort', () => seen.push('two'));
    disposed.addEventListener('abort', () => seen.push('disposed'));
    // a child aborted on its own leaves the parent and its siblings alone
    two.abort();
    assert.equal(signal.aborted, false);
    assert.equal(one.aborted, false);
    parent.abort();
    assert.equal(one.aborted, true);
    assert.equal(disposed.aborted, false);
    assert.deepEqual(seen, ['two', 'one']);
    assert.equal(Cancellation.linked(signal).aborted, true);
  }
  assert.equal(Cancellation.linked(undefined).aborted, false);
});

test('an object listener gets handleEvent(), on a Cancellation as on an AbortSignal; removing it works the same', () => {
  const seen = [];
  const a = { handleEvent: () => seen.push('a') };
  const b = { handleEvent: () => seen.push('b') };
  const c = new Cancellation();
  c.addEventListener('abort', a);
  c.addEventListener('abort', b);
  c.removeEventListener('abort', a);
  c.abort();
  const controller = new AbortController();
  controller.signal.addEventListener('abort', a);
  controller.abort();
  assert.deepEqual(seen, ['b', 'a']);
});
