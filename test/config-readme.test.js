// README's variables table against the code: every variable has a row with the default --help prints, and
// the values each variable takes (its spec's min and max, or its words: the fields loadConfig checks and
// --help prints) are stated in that row.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { VARIABLES } from '../dist/config.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

/** README table rows by variable name: { default, meaning }. */
const rows = new Map();
for (const line of readme.split('\n')) {
  const m = /^\| `([A-Z][A-Z0-9_]+)` \| (`[^`]*`|empty) \| (.*) \|$/.exec(line);
  if (m) rows.set(m[1], { default: m[2] === 'empty' ? '' : m[2].slice(1, -1), meaning: m[3] });
}

test('every variable has a README table row with the same default as --help, and no row is stale', () => {
  for (const spec of VARIABLES) {
    const row = rows.get(spec.name);
    assert.ok(row, `${spec.name} has no row in the README table`);
    assert.equal(row.default, spec.default, spec.name);
  }
  for (const name of rows.keys()) assert.ok(VARIABLES.some((v) => v.name === name), `README row ${name} is no variable`);
});

test('every whole-number range loadConfig checks (the spec\'s min and max) is stated in its README row as "min to max"', () => {
  const wholes = VARIABLES.filter((v) => 'min' in v);
  assert.ok(wholes.length >= 40, `only ${wholes.length} variables have a min and max`);
  for (const spec of wholes) {
    const range = `${spec.min} to ${spec.max}`;
    assert.ok(rows.get(spec.name).meaning.includes(range), `${spec.name}: README row does not say "${range}"`);
  }
});

test('every word a word variable takes (the spec\'s values) is named in its README row as `word`', () => {
  const words = VARIABLES.filter((v) => 'values' in v);
  assert.deepEqual(words.map((v) => v.name).sort(), ['CC_EXEC_LUA', 'CC_LINK_PIN', 'LOG_LEVEL', 'MCP_ALLOW_UNAUTHENTICATED']);
  for (const spec of words) {
    for (const value of spec.values) assert.ok(rows.get(spec.name).meaning.includes(`\`${value}\``), `${spec.name}: README row does not name \`${value}\``);
  }
});

test('a variable with a whole-number default has a min and max, and no --help meaning states a range of its own', () => {
  for (const spec of VARIABLES) {
    if (/^\d+$/.test(spec.default)) {
      assert.ok('min' in spec && 'max' in spec, `${spec.name} (default ${spec.default}) has no min and max`);
      assert.ok(spec.min <= Number(spec.default) && Number(spec.default) <= spec.max, `${spec.name}: default ${spec.default} is outside ${spec.min} to ${spec.max}`);
    }
    if ('values' in spec) assert.ok(spec.values.includes(spec.default), `${spec.name}: default ${spec.default} is not one of its values`);
    // --help prints the range from min and max; one written into the meaning as well could drift from them
    assert.doesNotMatch(spec.meaning, /\d to \d|\(at most \d+\)|\bon\|off/, `${spec.name}: the meaning states its own range`);
  }
});
