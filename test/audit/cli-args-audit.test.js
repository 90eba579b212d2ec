// Audit: cc-mcp call's key=value pairs were assigned with args[key] = value, so a key "__proto__"
// set the arguments object's prototype instead of an argument: the value was silently not sent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pairsToArgs } from '../../dist/cli/args.js';

test('bug: cc-mcp call x __proto__:={...} (or __proto__=...) sent no such argument; now it is an own argument like any other', () => {
  const args = pairsToArgs([{ key: '__proto__', value: '{"code":"x"}', raw: true }, { key: 'constructor', value: '5', raw: false }], {});
  assert.equal(JSON.stringify(args), '{"__proto__":{"code":"x"},"constructor":5}');
  assert.equal(Object.getPrototypeOf(args), Object.prototype);
  // "constructor" is not a schema the tool declared: read as JSON, not as a string
  assert.deepEqual(JSON.parse(JSON.stringify(pairsToArgs([{ key: 'toString', value: '12', raw: false }], { s: { type: 'string' } }))), { toString: 12 });
});
