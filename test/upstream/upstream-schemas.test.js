// An upstream tool's inputSchema is the upstream's business: keywords a config Lua tool may not use
// (oneOf, anyOf, $ref, format), another regex dialect's pattern and malformed values are listed as
// given and do not stop a call; the upstream checks its own arguments.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeConfig } from '../config/write.js';
import { fixtureServer } from './fixture.js';
import { callTool, rpc, until, withBridge } from '../helpers.js';

// what a Lua tool's inputSchema may not hold, and values malformed for the bridge's validator
const COMPOSED_SCHEMA = {
  type: 'object',
  properties: {
    pick: { oneOf: [{ type: 'string' }, { type: 'integer' }] },
    ref: { $ref: '#/$defs/word' },
    word: { type: 'string', pattern: '^\\w+$', format: 'hostname' },
    n: { type: 'number', multipleOf: 0.01 },
    bad: { enum: 'x', type: 5, pattern: '(?P<x>.)' },
    list: { type: 'array', uniqueItems: true, maxItems: 1 },
  },
  $defs: { word: { type: 'string' } },
  anyOf: [{ required: ['pick'] }, { required: ['word'] }],
  maxProperties: 2,
};

const health = async (bridge) => (await (await fetch(new URL('/health', bridge.mcpUrl))).json());

test('an upstream tool whose schema uses oneOf, $ref, format, a \\w pattern and malformed values is listed whole and callable', () =>
  withBridge({ CC_CONFIG: writeConfig({ servers: [fixtureServer('fx', '--schema', JSON.stringify(COMPOSED_SCHEMA))] }) }, async (bridge) => {
    await until(async () => (await health(bridge)).servers.find((s) => s.id === 'fx' && s.state === 'up'));
    const tools = (await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).json.result.tools;
    const composed = tools.find((t) => t.name === 'fx__composed');
    assert.ok(composed, tools.map((t) => t.name).join());
    assert.deepEqual(composed.inputSchema, COMPOSED_SCHEMA);
    // "é" fails JavaScript's \w (Python's takes it), [1, 1] repeats, 6 arguments > maxProperties, bad: 1 is
    // outside no valid enum: the bridge enforces none of that for an upstream, so the upstream gets them all
    const args = { pick: 'a', word: 'é', n: 0.07, bad: 1, list: [1, 1], ref: 'x' };
    const result = await callTool(bridge, 'fx__composed', args);
    assert.equal(result.isError, undefined, JSON.stringify(result));
    assert.deepEqual(result.structuredContent, { args });
    // the basics still hold for upstream tools: a wrong type is refused before the upstream sees it
    const wrong = await callTool(bridge, 'fx__composed', { n: 'x' });
    assert.equal(wrong.isError, true);
    assert.match(wrong.content[0].text, /argument "n" must be a number, got a string/);
  }));

// Before: the bridge ran an upstream's patternProperties keys on every argument key, so "^(a|a)*$"
// and a 40-character key blocked the event loop for hours (27 characters: 680 ms, doubling with each).
test('bug: an upstream patternProperties key that backtracks exponentially was run on argument keys; now it is not run, the key is passed on, and the operator is told once', () => {
  const schema = { type: 'object', properties: { n: { type: 'integer' } }, patternProperties: { '^(a|a)*$': { type: 'string' }, '^x-': { type: 'integer' } }, additionalProperties: false };
  return withBridge({ CC_CONFIG: writeConfig({ servers: [fixtureServer('fx', '--schema', JSON.stringify(schema))] }) }, async (bridge) => {
    await until(async () => (await health(bridge)).servers.find((s) => s.id === 'fx' && s.state === 'up'));
    // 22 characters: ~0.1 s of backtracking on the previous build, then refused as unknown (each one
    // more doubles it); here it is not run at all
    const key = `${'a'.repeat(22)}!`;
    const result = await callTool(bridge, 'fx__composed', { [key]: 'v', n: 1 });
    assert.equal(result.isError, undefined, JSON.stringify(result));
    assert.deepEqual(result.structuredContent, { args: { [key]: 'v', n: 1 } });
    // the safe key beside it is still checked, and so are the basics
    const wrong = await callTool(bridge, 'fx__composed', { 'x-1': 'not an integer' });
    assert.match(wrong.content[0].text, /argument "x-1" must be an integer/);
    const warned = bridge.logs.filter((l) => l.includes('tool "composed": the bridge does not run the patternProperties key "^(a|a)*$" at inputSchema.patternProperties (the repeated group (a|a)* holds alternatives'));
    assert.equal(warned.length, 1, bridge.logs.join('\n'));
    assert.match(warned[0], /^.*warn upstream fx tool "composed": .*; argument keys only it could match are passed on unchecked \(the upstream checks its own arguments\)$/);
  });
});

test('unrunPatterns finds refused patternProperties keys at every depth validate walks, and none in a safe schema', async () => {
  const { unrunPatterns } = await import('../../dist/upstream/tool-check.js');
  const deep = { type: 'object', properties: { o: { type: 'object', patternProperties: { '^(a+)+$': {} } } }, additionalProperties: { patternProperties: { '(x*)*': {} } }, items: { patternProperties: { '\\w+\\w+!': {} } }, patternProperties: { '^ok$': { patternProperties: { '(\\1)': {} } } } };
  assert.deepEqual(unrunPatterns(deep).map((u) => [u.at, u.pattern]), [
    ['inputSchema.patternProperties["^ok$"].patternProperties', '(\\1)'],
    ['inputSchema.properties.o.patternProperties', '^(a+)+$'],
    ['inputSchema.additionalProperties.patternProperties', '(x*)*'],
    ['inputSchema.items.patternProperties', '\\w+\\w+!'],
  ]);
  assert.equal(unrunPatterns(deep, 2).length, 2);
  assert.deepEqual(unrunPatterns({ type: 'object', patternProperties: { '^x-': {} }, properties: { a: { pattern: '^[a-z]+$' } } }), []);
  // a refused `pattern` (the keyword) is found too, at the same depths
  assert.deepEqual(
    unrunPatterns({ type: 'object', properties: { a: { pattern: '^(a+)+$' }, l: { items: { pattern: '(x*)*' } } }, additionalProperties: { pattern: '(\\1)' } }).map((u) => [u.keyword, u.at, u.pattern]),
    [
      ['pattern', 'inputSchema.properties.a.pattern', '^(a+)+$'],
      ['pattern', 'inputSchema.properties.l.items.pattern', '(x*)*'],
      ['pattern', 'inputSchema.additionalProperties.pattern', '(\\1)'],
    ],
  );
});

// Before: an upstream tool's `pattern` was never run on its arguments (only patternProperties keys were).
test('bug: an upstream tool\'s "pattern" was never run on arguments; now it is when pattern-safety accepts it (printable ASCII up to MCP_PATTERN_MAX_CHARS), a refused one is skipped with one warning, and the rest is the upstream\'s', () => {
  const schema = {
    type: 'object',
    properties: {
      file: { type: 'string', pattern: '^[a-z0-9_-]+\\.lua$' },
      word: { type: 'string', pattern: '^\\w+$' },
      tags: { type: 'array', items: { type: 'string', pattern: '^#' } },
      nested: { type: 'object', properties: { id: { type: 'string', pattern: '^[0-9]{3}$' } } },
      risky: { type: 'string', pattern: '^(a+)+$' },
      python: { type: 'string', pattern: '(?P<x>a)' },
    },
  };
  return withBridge({ MCP_PATTERN_MAX_CHARS: '50', CC_CONFIG: writeConfig({ servers: [fixtureServer('fx', '--schema', JSON.stringify(schema))] }) }, async (bridge) => {
    await until(async () => (await health(bridge)).servers.find((s) => s.id === 'fx' && s.state === 'up'));
    const passes = async (args) => {
      const result = await callTool(bridge, 'fx__composed', args);
      assert.equal(result.isError, undefined, `${JSON.stringify(args)}: ${JSON.stringify(result)}`);
      assert.deepEqual(result.structuredContent, { args });
    };
    const refused = async (args, message) => {
      const result = await callTool(bridge, 'fx__composed', args);
      assert.equal(result.isError, true, JSON.stringify(args));
      assert.equal(result.content[0].text, `Invalid arguments for fx__composed: ${message}.`);
    };
    await passes({ file: 'start.lua', word: 'abc_1', tags: ['#a'], nested: { id: '123' } });
    const quoted = (name) => JSON.stringify(schema.properties[name].pattern); // as the message quotes it
    await refused({ file: 'start.txt' }, `argument "file" must match the pattern ${quoted('file')}`);
    await refused({ tags: ['#a', 'b'] }, 'argument "tags"[1] must match the pattern "^#"');
    await refused({ nested: { id: '12' } }, 'argument "nested".id must match the pattern "^[0-9]{3}$"');
    await refused({ word: 'a b' }, `argument "word" must match the pattern ${quoted('word')}`);
    // the upstream's: characters outside printable ASCII (Python's and Rust's \w take "é"), a line
    // break (Python's $ matches before a final one), a string over MCP_PATTERN_MAX_CHARS (refused for
    // a config tool), a pattern pattern-safety refuses, one that is not ECMA-262
    await passes({ word: 'é' });
    await passes({ word: 'abc\n' });
    await passes({ file: 'x'.repeat(51) });
    await passes({ risky: `${'a'.repeat(30)}!` });
    await passes({ python: 'b' });
    const warned = bridge.logs.filter((l) => l.includes('the bridge does not run the pattern'));
    assert.equal(warned.length, 1, bridge.logs.join('\n'));
    assert.match(warned[0], /warn upstream fx tool "composed": the bridge does not run the pattern "\^\(a\+\)\+\$" at inputSchema\.properties\.risky\.pattern \(.+\); values it would check are passed on unchecked \(the upstream checks its own arguments\)$/);
  });
});
