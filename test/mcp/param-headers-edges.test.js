// x-mcp-header annotations at their edges (found by mutation testing): how deep under `properties` one
// is still found, and the header a parameter mirrors, pure.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { paramHeaders, paramHeadersProblem } from '../../dist/mcp/param-headers.js';

/** A schema whose parameter `p1.p2. ... .p<depth>` carries `x-mcp-header: Deep`. */
function nested(depth) {
  let schema = { type: 'string', 'x-mcp-header': 'Deep' };
  for (let i = depth; i >= 1; i--) schema = { type: 'object', properties: { [`p${i}`]: schema } };
  return schema;
}

test('an annotation is found up to 33 properties deep, and not past that', () => {
  assert.deepEqual(paramHeaders(nested(1)), [{ path: ['p1'], name: 'Deep' }]);
  assert.deepEqual(paramHeaders(nested(3)).map((h) => h.path.length), [3]);
  assert.deepEqual(paramHeaders(nested(33)).map((h) => h.path.length), [33]);
  assert.deepEqual(paramHeaders(nested(34)), []);
});

test('Mcp-Param-* values: booleans as true/false, integers only in decimal, null as no value, names in any case, broken base64 and bad characters refused', () => {
  const schema = {
    type: 'object',
    properties: {
      flag: { type: 'boolean', 'x-mcp-header': 'Flag' },
      count: { type: 'integer', 'x-mcp-header': 'Count' },
      bad: { type: 'string', 'x-mcp-header': 'not a token' },
    },
  };
  const problem = (args, headers) => paramHeadersProblem(schema, args, headers);
  assert.equal(problem({ flag: true, count: 42 }, { 'mcp-param-flag': 'true', 'mcp-param-count': '42' }), null);
  assert.equal(problem({ count: 42 }, { 'mcp-param-count': '4.2e1' }), null, 'decimal exponent');
  assert.match(problem({ flag: false }, { 'mcp-param-flag': 'true' }), /^Mcp-Param-Flag header value "true" does not match arguments\.flag false$/);
  assert.match(problem({ count: 42 }, { 'mcp-param-count': '0x2a' }), /^Mcp-Param-Count header value "0x2a" does not match arguments\.count 42$/);
  assert.equal(problem({ flag: null }, {}), null, 'null needs no header');
  assert.match(problem({ flag: null }, { 'mcp-param-flag': 'null' }), /^Mcp-Param-Flag header value "null" does not match arguments\.flag null$/);
  assert.match(problem({}, { 'mcp-param-flag': 'true' }), /^Mcp-Param-Flag header value "true" does not match arguments\.flag \(absent\)$/);
  assert.match(problem({ flag: true }, {}), /^the Mcp-Param-Flag header is required \(arguments\.flag has a value\)$/);
  assert.match(problem({ flag: true }, { 'mcp-param-flag': '=?base64?!!?=' }), /^the Mcp-Param-Flag header has a malformed =\?base64\?\.\.\.\?= value$/);
  assert.match(problem({ flag: true }, { 'mcp-param-flag': 'tru\u00e9' }), /^the Mcp-Param-Flag header contains invalid characters$/);
  assert.equal(problem({ bad: 'x' }, {}), null, 'a name that is not a header token annotates nothing');
});
