import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validate } from '../../dist/tools/schema.js';

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
