// The compiled argument check (schema-fast.ts) must accept exactly what validate() accepts, and the
// call path's validateArgs must answer exactly what validate() answers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validate } from '../../dist/tools/schema.js';
import { compile, validateArgs } from '../../dist/tools/schema-fast.js';
import { BUILTIN_TOOLS } from '../../dist/tools/builtins.js';

// a small deterministic generator (no Math.random: a failure reproduces)
let seed = 0x2545f491;
const rand = () => {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) / 2 ** 32;
};
const pick = (list) => list[Math.floor(rand() * list.length)];

const KEYS = ['id', 'code', 'n', '__proto__', 'toString', 'x'];
const SCALARS = [0, -1, 1, 2.5, 3, 64, 1e9, -0, '', 'a', 'abc', 'h\u00e9llo', '\ud83d\ude00\ud83d\ude00', '\ud800', true, false, null];

function value(depth) {
  const r = rand();
  if (depth > 2 || r < 0.55) return pick(SCALARS);
  if (r < 0.75) return Array.from({ length: Math.floor(rand() * 3) }, () => value(depth + 1));
  const o = {};
  for (let i = Math.floor(rand() * 4); i > 0; i--) {
    const key = pick(KEYS);
    if (key === '__proto__') Object.defineProperty(o, key, { value: value(depth + 1), enumerable: true, configurable: true, writable: true });
    else o[key] = value(depth + 1);
  }
  return o;
}

const TYPES = ['object', 'array', 'string', 'integer', 'number', 'boolean', 'null', 'any'];
function schema(depth) {
  const s = {};
  if (rand() < 0.7) s.type = rand() < 0.8 ? pick(TYPES) : [pick(TYPES), pick(TYPES)];
  if (rand() < 0.15) s.enum = rand() < 0.8 ? [pick(SCALARS), pick(SCALARS)] : [{ a: 1 }, 'a'];
  if (rand() < 0.25) s.minimum = pick([0, 1, 2.5, '1']);
  if (rand() < 0.25) s.maximum = pick([0, 3, 64]);
  if (rand() < 0.25) s.minLength = pick([0, 1, 2, 3]);
  if (rand() < 0.25) s.maxLength = pick([0, 1, 3]);
  if (rand() < 0.1) s.description = 'annotation';
  if (rand() < 0.08) s[pick(['const', 'pattern', 'multipleOf', 'minItems', 'uniqueItems', 'maxProperties', 'patternProperties', 'exclusiveMinimum'])] = pick([1, 'a', { x: {} }, true]);
  if (depth < 3) {
    if (rand() < 0.4) {
      s.properties = {};
      for (let i = Math.floor(rand() * 3); i > 0; i--) s.properties[pick(KEYS)] = rand() < 0.85 ? schema(depth + 1) : pick([true, false, null, 0, 1]);
      if (rand() < 0.05) s.properties = pick([[schema(depth + 1)], 'p']);
    }
    if (rand() < 0.3) s.required = [pick(KEYS), pick([...KEYS, 7])];
    if (rand() < 0.4) s.additionalProperties = rand() < 0.5 ? false : rand() < 0.7 ? schema(depth + 1) : pick([true, [], null]);
    if (rand() < 0.25) s.items = rand() < 0.9 ? schema(depth + 1) : pick([[], true]);
  }
  return s;
}

test('a compiled schema accepts exactly what validate() accepts (random schemas and values, both modes)', () => {
  let compiledCount = 0;
  let refused = 0;
  let accepted = 0;
  for (let i = 0; i < 3000; i++) {
    const s = schema(0);
    const check = compile(s, 0);
    if (check) compiledCount++;
    for (let j = 0; j < 20; j++) {
      const v = value(0);
      for (const full of [true, false]) {
        const expected = validate(v, s, 'arguments', full);
        assert.equal(validateArgs(v, s, 'arguments', full), expected, JSON.stringify({ s, v, full }));
        if (check) {
          assert.equal(check(v), expected === null, JSON.stringify({ s, v, full }));
          if (expected === null) accepted++;
          else refused++;
        }
      }
    }
  }
  // the generator reaches both answers through compiled schemas, not only the fallback
  assert.ok(compiledCount > 1000, `${compiledCount} compiled`);
  assert.ok(accepted > 1000 && refused > 1000, `${accepted} accepted, ${refused} refused`);
});

test("every built-in tool's input schema is compiled, and its checks agree with validate()", () => {
  const args = [{}, { computerId: 1, code: 'return' }, { computerId: -1, code: 'x' }, { computerId: 1.5, code: 'x' }, { computer: '', code: 'x' },
    { computerId: 1, code: '' }, { computerId: 1, code: 'x', timeoutMs: 0 }, { computerId: 1, code: 'x', detach: 'yes' }, { computerId: 1, code: 'x', extra: 1 },
    { computerId: 1, path: 'a' }, { computerId: 1, path: 'a', content: 'b' }, { x: 1 }, [], null, 'text'];
  for (const tool of BUILTIN_TOOLS) {
    const check = compile(tool.inputSchema, 0);
    assert.ok(check, `${tool.name}'s schema is compiled`);
    for (const v of args) assert.equal(check(v), validate(v, tool.inputSchema) === null, `${tool.name} ${JSON.stringify(v)}`);
  }
});

test('a refused value gets validate()\'s message; keys of Object.prototype are not properties', () => {
  const s = { type: 'object', properties: { code: { type: 'string', minLength: 1 } }, required: ['code'], additionalProperties: false };
  assert.equal(validateArgs({ code: '' }, s, 'arguments', true), 'argument "code" must not be empty');
  assert.equal(validateArgs({ code: 'x', toString: 1 }, s, 'arguments', true), 'unknown argument "toString"; expected "code"');
  assert.equal(validateArgs(JSON.parse('{"code":"x","__proto__":1}'), s, 'arguments', true), 'unknown argument "__proto__"; expected "code"');
  assert.equal(validateArgs({}, s, 'arguments', true), 'argument "code" is required');
  assert.equal(validateArgs({ code: 'x' }, s, 'arguments', true), null);
  // a falsy property schema is passed over by validate(): the key is unknown, so additionalProperties decides
  for (const falsy of [false, 0, '', null]) {
    const f = { type: 'object', properties: { a: falsy, b: true }, additionalProperties: false };
    assert.equal(compile(f, 0)({ a: 1 }), false, `properties.a = ${JSON.stringify(falsy)}`);
    assert.equal(compile(f, 0)({ b: 1 }), true);
    assert.equal(validateArgs({ a: 1 }, f, 'arguments', true), validate({ a: 1 }, f));
  }
  // not compiled (pattern): validate() alone, same answers
  const p = { type: 'string', pattern: '^a' };
  assert.equal(compile(p, 0), null);
  assert.equal(validateArgs('b', p, 'arguments', true), 'arguments must match the pattern "^a"');
  // an upstream tool's pattern is run too, on printable ASCII only (dialects differ elsewhere)
  assert.equal(validateArgs('b', p, 'arguments', false), 'arguments must match the pattern "^a"');
  assert.equal(validateArgs('é', p, 'arguments', false), null);
});
