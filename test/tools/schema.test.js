import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isMultipleOf, validate } from '../../dist/tools/schema.js';

const schema = {
  type: 'object',
  properties: {
    id: { type: 'integer', minimum: 0, maximum: 10 },
    name: { type: 'string', minLength: 1, maxLength: 5 },
    code: { type: 'string', minLength: 3 },
    ratio: { type: 'number' },
    mode: { enum: ['a', 'b'] },
    tags: { type: 'array', items: { type: 'string' } },
    nested: { type: 'object', properties: { flag: { type: 'boolean' } }, required: ['flag'], additionalProperties: { type: 'string' } },
    either: { type: ['string', 'null'] },
  },
  required: ['id'],
  additionalProperties: false,
};

test('valid arguments pass', () => {
  assert.equal(validate({ id: 3, name: 'ab', ratio: 2, mode: 'a', tags: ['x'], nested: { flag: true, extra: 's' }, either: null }, schema), null);
  assert.equal(validate({ id: 0, ratio: 0.5, either: 's' }, schema), null);
});

test('each failure names the argument and what is wrong', () => {
  const cases = [
    [[], 'arguments must be an object, got an array'],
    [null, 'arguments must be an object, got a null'],
    [{}, 'argument "id" is required'],
    [{ id: 'x' }, 'argument "id" must be an integer, got a string'],
    [{ id: 1.5 }, 'argument "id" must be an integer, got a number'],
    [{ id: -1 }, 'argument "id" must be at least 0'],
    [{ id: 11 }, 'argument "id" must be at most 10'],
    [{ id: 1, name: '' }, 'argument "name" must not be empty'],
    [{ id: 1, name: 'toolong' }, 'argument "name" must be at most 5 characters'],
    [{ id: 1, code: 'x' }, 'argument "code" must be at least 3 characters'],
    [{ id: 1, mode: 'c' }, 'argument "mode" must be one of "a", "b"'],
    [{ id: 1, tags: ['x', 2] }, 'argument "tags"[1] must be a string, got an integer'],
    [{ id: 1, nested: {} }, 'argument "nested".flag is required'],
    [{ id: 1, nested: { flag: 1 } }, 'argument "nested".flag must be a boolean, got an integer'],
    [{ id: 1, nested: { flag: true, other: 3 } }, 'argument "nested".other must be a string, got an integer'],
    [{ id: 1, either: 3 }, 'argument "either" must be a string or a null, got an integer'],
    [{ id: 1, bogus: true }, 'unknown argument "bogus"; expected "id", "name", "code", "ratio", "mode", "tags", "nested", "either"'],
  ];
  for (const [value, message] of cases) assert.equal(validate(value, schema), message, JSON.stringify(value));
});

test('a tool without arguments says so for any argument given', () => {
  const none = { type: 'object', additionalProperties: false };
  assert.equal(validate({}, none), null);
  assert.equal(validate({ x: 1 }, none), 'unknown argument "x"; this tool takes no arguments');
});

test('schemas of upstream tools: enum members compared as JSON values, patternProperties keys are known and checked', () => {
  const upstream = {
    type: 'object',
    properties: {
      point: { enum: [{ x: 1, y: [2] }, [1, 2], 'a'] },
    },
    patternProperties: { '^x-': { type: 'string' }, '(': { type: 'number' } },
    additionalProperties: false,
  };
  assert.equal(validate({ point: { y: [2], x: 1 } }, upstream), null);
  assert.equal(validate({ point: [1, 2] }, upstream), null);
  assert.equal(validate({ point: 'a' }, upstream), null);
  assert.equal(validate({ point: { x: 1, y: [3] } }, upstream), 'argument "point" must be one of {"x":1,"y":[2]}, [1,2], "a"');
  assert.equal(validate({ point: [1] }, upstream), 'argument "point" must be one of {"x":1,"y":[2]}, [1,2], "a"');
  assert.equal(validate({ point: { x: 1, y: [2], z: 0 } }, upstream), 'argument "point" must be one of {"x":1,"y":[2]}, [1,2], "a"');
  assert.equal(validate({ point: null }, upstream), 'argument "point" must be one of {"x":1,"y":[2]}, [1,2], "a"');
  assert.equal(validate({ 'x-trace': 'on' }, upstream), null);
  assert.equal(validate({ 'x-trace': 1 }, upstream), 'argument "x-trace" must be a string, got an integer');
  assert.equal(validate({ other: 1 }, upstream), 'unknown argument "other"; expected "point"');
  // sub-schemas that are not objects (true, null) check nothing instead of throwing
  assert.equal(validate({ 'y-a': 1, b: 2 }, { type: 'object', patternProperties: { '^y-': null }, additionalProperties: null }), null);
  assert.equal(validate({ 'y-a': 1 }, { type: 'object', patternProperties: { '^y-': true }, additionalProperties: false }), null);
});

test('minLength/maxLength counted UTF-16 units: JSON Schema counts characters, so a non-BMP character is one', () => {
  const emoji = '\u{1F600}'; // one character, two UTF-16 units
  const max = { type: 'string', maxLength: 3 };
  assert.equal(validate(emoji.repeat(3), max, 'text'), null);
  assert.equal(validate(`ab${emoji}`, max, 'text'), null);
  assert.equal(validate(emoji.repeat(4), max, 'text'), 'text must be at most 3 characters');
  assert.equal(validate(`abc${emoji}`, max, 'text'), 'text must be at most 3 characters');
  const min = { type: 'string', minLength: 2 };
  assert.equal(validate(emoji, min, 'text'), 'text must be at least 2 characters');
  assert.equal(validate(emoji.repeat(2), min, 'text'), null);
  assert.equal(validate(`a${emoji}`, min, 'text'), null);
  assert.equal(validate('\u{1F600}', { type: 'string', minLength: 1, maxLength: 1 }, 'key'), null);
  // a lone surrogate (JSON may carry one as \ud800) is one character too
  assert.equal(validate('\ud800\ud800\ud800', { type: 'string', maxLength: 2 }, 'text'), 'text must be at most 2 characters');
  assert.equal(validate('\udc00\ud800', { type: 'string', minLength: 2, maxLength: 2 }, 'text'), null);
  assert.equal(validate(`\ud800${emoji}`, { type: 'string', minLength: 2, maxLength: 2 }, 'text'), null);
});

// Bug: the keywords below were declared to clients but not enforced, so arguments outside them
// reached a config Lua tool's chunk.
test('unenforced keywords: pattern, exclusive bounds, multipleOf, const, item and property counts are enforced', () => {
  const s = {
    type: 'object',
    properties: {
      name: { type: 'string', pattern: '^[a-z]+$' },
      wide: { type: 'string', pattern: '^\\p{L}$' },
      gt: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 10 },
      step: { type: 'number', multipleOf: 0.1 },
      even: { type: 'integer', multipleOf: 2 },
      mode: { const: 'fast' },
      point: { const: { x: 1, y: [2] } },
      list: { type: 'array', minItems: 1, maxItems: 3, uniqueItems: true },
      one: { type: 'array', minItems: 1, maxItems: 1 },
      opts: { type: 'object', minProperties: 1, maxProperties: 2 },
    },
    maxProperties: 3,
  };
  const ok = [
    { name: 'abc' }, { wide: 'é' }, { wide: '\u{1D4D0}' }, { gt: 0.001 }, { gt: 9.99 }, { step: 0.3 }, { step: 1.7 }, { step: -0.2 }, { even: -4 },
    { mode: 'fast' }, { point: { y: [2], x: 1 } }, { list: [1] }, { list: [1, '1', [1]] },
    { list: [{ a: 1, b: 2 }, { a: 1, b: 3 }] }, { one: [[]] }, { opts: { a: 1 } }, { opts: { a: 1, b: 2 } }, { a: 1, b: 2, c: 3 },
  ];
  for (const args of ok) assert.equal(validate(args, s), null, JSON.stringify(args));
  const bad = [
    [{ name: 'ab1' }, 'argument "name" must match the pattern "^[a-z]+$"'],
    [{ name: '' }, 'argument "name" must match the pattern "^[a-z]+$"'],
    [{ wide: 'ab' }, 'argument "wide" must match the pattern "^\\\\p{L}$"'],
    [{ gt: 0 }, 'argument "gt" must be greater than 0'],
    [{ gt: 10 }, 'argument "gt" must be less than 10'],
    [{ step: 0.35 }, 'argument "step" must be a multiple of 0.1'],
    [{ even: 3 }, 'argument "even" must be a multiple of 2'],
    [{ mode: 'slow' }, 'argument "mode" must be "fast"'],
    [{ point: { x: 1, y: [2], z: 1 } }, 'argument "point" must be {"x":1,"y":[2]}'],
    [{ list: [] }, 'argument "list" must have at least 1 item, got 0'],
    [{ list: [1, 2, 3, 4] }, 'argument "list" must have at most 3 items, got 4'],
    [{ one: [1, 2] }, 'argument "one" must have at most 1 item, got 2'],
    [{ list: [1, 2, 1] }, 'argument "list" must not repeat an item: argument "list"[2] equals argument "list"[0]'],
    [{ list: [{ a: 1, b: [2] }, { b: [2], a: 1 }] }, 'argument "list" must not repeat an item: argument "list"[1] equals argument "list"[0]'],
    [{ opts: {} }, 'argument "opts" must have at least 1 property, got 0'],
    [{ opts: { a: 1, b: 2, c: 3 } }, 'argument "opts" must have at most 2 properties, got 3'],
    [{ a: 1, b: 2, c: 3, d: 4 }, 'arguments must have at most 3 arguments, got 4'],
  ];
  for (const [args, message] of bad) assert.equal(validate(args, s), message, JSON.stringify(args));
  assert.equal(validate({}, { type: 'object', minProperties: 1 }), 'arguments must have at least 1 argument, got 0');
});

test('an upstream tool schema (full = false) keeps only the basic keywords: the upstream checks its own arguments', () => {
  const s = { type: 'object', properties: { w: { type: 'string', pattern: '^\\w+$' }, n: { type: 'number', multipleOf: 0.01, minimum: 0 } }, minProperties: 5 };
  // Python's \w takes "é"; ours would not: the bridge must not refuse what the upstream accepts
  assert.equal(validate({ w: 'é', n: 0.07 }, s, 'arguments', false), null);
  assert.equal(validate('é', s.properties.w, 'w'), 'w must match the pattern "^\\\\w+$"');
  assert.equal(validate({ w: 'x' }, s), 'arguments must have at least 5 arguments, got 1');
  assert.equal(validate({ n: -1 }, s, 'arguments', false), 'argument "n" must be at least 0');
});

// Bug: an upstream schema with a malformed keyword value (enum: "x", type: 5) made validate throw.
test('malformed keyword values in an upstream schema are skipped, never thrown on', () => {
  const s = {
    type: 'object',
    properties: { a: { enum: 'x' }, b: { type: 5 }, c: { minimum: '3', pattern: 7, items: 'x' }, d: 'x' },
    required: 'a',
  };
  for (const full of [true, false]) {
    assert.equal(validate({ a: 1, b: 'x', c: [1], d: 2 }, s, 'arguments', full), null);
    assert.equal(validate({ c: 1 }, s, 'arguments', full), null);
  }
  // a pattern that is not a valid RegExp (another engine's dialect) checks nothing
  assert.equal(validate('x', { pattern: '(?P<n>x)' }, 'p'), null);
});

// Bug: properties/required were looked up with `in` and [], so inherited names counted:
// "toString", "constructor" or "__proto__" passed additionalProperties: false, and a required
// "toString" counted as given.
test('inherited names: an unknown "toString"/"constructor"/"__proto__" argument is refused, a required "toString" is not given by {}', () => {
  const s = { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false };
  assert.equal(validate({ toString: 1 }, s), 'unknown argument "toString"; expected "a"');
  assert.equal(validate({ constructor: 1 }, s), 'unknown argument "constructor"; expected "a"');
  assert.equal(validate(JSON.parse('{"__proto__": 1}'), s), 'unknown argument "__proto__"; expected "a"');
  assert.equal(validate({}, { type: 'object', required: ['toString'] }), 'argument "toString" is required');
});

test('isMultipleOf: exact for integers, within rounding for fractions', () => {
  assert.equal(isMultipleOf(10, 5), true);
  assert.equal(isMultipleOf(10, 3), false);
  assert.equal(isMultipleOf(0.3, 0.1), true);
  assert.equal(isMultipleOf(0.07, 0.01), true);
  assert.equal(isMultipleOf(0.075, 0.01), false);
  assert.equal(isMultipleOf(1e308, 1e-308), false);
  assert.equal(isMultipleOf(4.5, 1.5), true);
});
