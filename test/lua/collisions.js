// Returned tables with colliding keys (key-collisions): the Lua chunk and the check of its
// answer, shared by the Lua 5.2 harness (key-collisions.test.js) and CraftOS-PC (craftos-jobs.test.js).
import assert from 'node:assert/strict';
import { exact, expected } from './exact.js';

export const COLLIDING_CODE = `
  local same = { __tostring = function() return "x" end }
  local a, b, c = setmetatable({}, same), setmetatable({}, same), setmetatable({}, same)
  return
    { [1] = "number", ["1"] = "string", ["1 (number key)"] = "literal", [1.5] = "x", ["1.5"] = "y" },
    { [true] = "boolean", ["true"] = "string", ["true (boolean key)"] = "lit1", ["true (boolean key 2)"] = "lit2" },
    { [a] = "a", [b] = "b", [c] = "c", x = "string", ["x (table key 2)"] = "literal" },
    { ["\\233"] = { v = "\\255" }, ["\\\\233"] = "utf", ["\\\\233 (string key)"] = "literal", [1 / 0] = "inf", inf = "string inf" }
`;

/** Checks the four returned tables of COLLIDING_CODE. */
export function checkColliding([nums, bools, tables, bytes]) {
  assert.deepEqual(nums.value, { 1: 'string', '1 (number key)': 'literal', '1 (number key 2)': 'number', 1.5: 'y', '1.5 (number key)': 'x' });
  assert.deepEqual(bools.value, { true: 'string', 'true (boolean key)': 'lit1', 'true (boolean key 2)': 'lit2', 'true (boolean key 3)': 'boolean' });
  // The three tables all read "x": which of them gets which suffix follows Lua's traversal order.
  const t = tables.value;
  assert.deepEqual(Object.keys(t).sort(), ['x', 'x (table key 2)', 'x (table key 3)', 'x (table key 4)', 'x (table key)']);
  assert.equal(t.x, 'string');
  assert.equal(t['x (table key 2)'], 'literal');
  assert.deepEqual([t['x (table key)'], t['x (table key 3)'], t['x (table key 4)']].sort(), ['a', 'b', 'c']);
  // The byte key \233 gives way to the UTF-8 keys "\233" and "\233 (string key)"; its bytes
  // entries (the key and the byte string inside its value) name it by its new name.
  assert.deepEqual(bytes.value, {
    '\\233': 'utf',
    '\\233 (string key)': 'literal',
    '\\233 (string key 2)': { v: '\\255' },
    inf: 'string inf',
    'inf (number key)': 'inf',
  });
  assert.deepEqual(
    [...bytes.bytes].sort((x, y) => x.path.length - y.path.length),
    [
      { path: ['\\233 (string key 2)'], key: true, base64: '6Q==' },
      { path: ['\\233 (string key 2)', 'v'], base64: '/w==' },
    ],
  );
  assert.deepEqual(
    exact(bytes),
    expected(new Map([
      ['\\233', 'utf'],
      ['\\233 (string key)', 'literal'],
      [Buffer.from([0xe9]), new Map([['v', Buffer.from([0xff])]])],
      ['inf', 'string inf'],
      ['inf (number key)', 'inf'],
    ])),
  );
}

