import { test } from 'node:test';
import assert from 'node:assert/strict';
import { aJsonType, boundsProblem, jsonType, withinBounds } from '../../dist/jsonrpc/bounds.js';

const nest = (levels) => JSON.parse('['.repeat(levels) + ']'.repeat(levels));

test('depth: scalars are 0, each array/object level counts one', () => {
  assert.equal(boundsProblem(42, { maxDepth: 0 }), null);
  assert.equal(boundsProblem([], { maxDepth: 0 }), 'nests deeper than 0 levels');
  assert.equal(boundsProblem({ a: [1, { b: 'x' }] }, { maxDepth: 3 }), null);
  assert.equal(boundsProblem({ a: [1, { b: {} }] }, { maxDepth: 3 }), 'nests deeper than 3 levels');
  assert.ok(withinBounds(nest(64), { maxDepth: 64 }));
  assert.ok(!withinBounds(nest(65), { maxDepth: 64 }));
});

test('a million levels are measured without recursion', () => {
  assert.equal(boundsProblem(nest(1_000_000), { maxDepth: 64 }), 'nests deeper than 64 levels');
});

test('node count: every value counts, containers included', () => {
  assert.equal(boundsProblem([1, 2, 3], { maxDepth: 5, maxNodes: 4 }), null);
  assert.equal(boundsProblem([1, 2, 3, 4], { maxDepth: 5, maxNodes: 4 }), 'holds more than 4 values');
  assert.equal(boundsProblem({ a: 1, b: [2] }, { maxDepth: 5, maxNodes: 4 }), null);
});

test('JSON type names never include the value', () => {
  assert.deepEqual([null, [], {}, 'x', 1, true].map(jsonType), ['null', 'array', 'object', 'string', 'number', 'boolean']);
  assert.deepEqual([null, [], {}, 'x'].map(aJsonType), ['null', 'an array', 'an object', 'a string']);
});

test('a walk that stops early leaves nothing behind for the next one (the stacks are shared)', () => {
  let deep = [];
  for (let i = 0; i < 10; i++) deep = [deep, [[[[1]]]], { a: [[[[2]]]] }];
  assert.equal(boundsProblem(deep, { maxDepth: 5 }), 'nests deeper than 5 levels');
  assert.equal(boundsProblem({ a: [1, 2] }, { maxDepth: 2 }), null);
  assert.equal(boundsProblem([[1], [2], [3], [4]], { maxDepth: 8, maxNodes: 3 }), 'holds more than 3 values');
  assert.equal(boundsProblem([[1]], { maxDepth: 2, maxNodes: 3 }), null);
});

test('node count: an object\'s values count like an array\'s; a bound below 1 holds nothing, not even a scalar', () => {
  assert.equal(boundsProblem({ a: 1, b: 2, c: 3 }, { maxDepth: 5, maxNodes: 4 }), null);
  assert.equal(boundsProblem({ a: 1, b: 2, c: 3, d: 4 }, { maxDepth: 5, maxNodes: 4 }), 'holds more than 4 values');
  assert.equal(boundsProblem(7, { maxDepth: 5, maxNodes: 0 }), 'holds more than 0 values');
  assert.equal(boundsProblem(7, { maxDepth: 5, maxNodes: 1 }), null);
});
