// An upstream tool's `pattern` and `patternProperties` as the bridge runs them (commit 88db34d): the
// bridge must never refuse what the upstream itself, with its own regex dialect, would take. A real
// upstream process (test/upstream/fixture.js), its schema given on the command line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeConfig } from '../config/write.js';
import { fixtureServer } from '../upstream/fixture.js';
import { callTool, until, withBridge } from '../helpers.js';

const health = async (bridge) => (await (await fetch(new URL('/health', bridge.mcpUrl))).json());

function caller(bridge) {
  return {
    passes: async (args) => {
      const result = await callTool(bridge, 'fx__composed', args);
      assert.equal(result.isError, undefined, `${JSON.stringify(args)}: ${JSON.stringify(result)}`);
      assert.deepEqual(result.structuredContent, { args });
    },
    refused: async (args, message) => {
      const result = await callTool(bridge, 'fx__composed', args);
      assert.equal(result.isError, true, JSON.stringify(args));
      assert.equal(result.content[0].text, `Invalid arguments for fx__composed: ${message}.`);
    },
  };
}

test('bug: an upstream pattern with an ECMA-262-only class ("[]" matches nothing, "[^]" anything; a literal "]" in Python, Rust, Go, Java) refused every value the upstream takes; now such a pattern is the upstream\'s', () => {
  const schema = {
    type: 'object',
    properties: {
      cls: { type: 'string', pattern: '^[]x[y]$' },
      any: { type: 'string', pattern: '^[^]x[y]$' },
      plain: { type: 'string', pattern: '^[xy]$' },
    },
  };
  return withBridge({ CC_CONFIG: writeConfig({ servers: [fixtureServer('fx', '--schema', JSON.stringify(schema))] }) }, async (bridge) => {
    await until(async () => (await health(bridge)).servers.find((s) => s.id === 'fx' && s.state === 'up'));
    const { passes, refused } = caller(bridge);
    // Python's re.search('^[]x[y]$', 'x') matches: one character of "]x[y"
    await passes({ cls: 'x' });
    await passes({ any: ']' });
    // a pattern the dialects read alike is still run
    await refused({ plain: 'z' }, 'argument "plain" must match the pattern "^[xy]$"');
    await passes({ plain: 'x' });
  });
});

test('bug: an upstream patternProperties key the bridge cannot read as its dialect does (not ECMA-262, or a key outside printable ASCII) made an argument "unknown" under additionalProperties: false; now such a key is the upstream\'s', () => {
  const schema = {
    type: 'object',
    properties: {
      python: { type: 'object', patternProperties: { '^(?P<n>x)-': { type: 'string' } }, additionalProperties: false },
      word: { type: 'object', patternProperties: { '^\\w+$': { type: 'integer' } }, additionalProperties: false },
    },
  };
  return withBridge({ MCP_PATTERN_MAX_CHARS: '20', CC_CONFIG: writeConfig({ servers: [fixtureServer('fx', '--schema', JSON.stringify(schema))] }) }, async (bridge) => {
    await until(async () => (await health(bridge)).servers.find((s) => s.id === 'fx' && s.state === 'up'));
    const { passes, refused } = caller(bridge);
    // Python's (?P<n>x) matches "x-1"; the bridge cannot compile it
    await passes({ python: { 'x-1': 's' } });
    // Python's and Rust's \w take "é"; a key longer than MCP_PATTERN_MAX_CHARS is not run either
    await passes({ word: { é: 1 } });
    await passes({ word: { ['k'.repeat(21)]: 1 } });
    // where the dialects agree (printable ASCII, a pattern read alike) the bridge still checks
    await refused({ word: { ab: 'str' } }, 'argument "word".ab must be an integer, got a string');
    await refused({ word: { 'a b': 1 } }, 'unknown argument "word"["a b"]; this tool takes no arguments');
  });
});
