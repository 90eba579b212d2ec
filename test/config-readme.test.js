// README's variables table against the code: every variable has a row with the default --help prints,
// and every range src/config.ts checks (integer(min, max)) is stated in that row as "min to max".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { VARIABLES } from '../dist/config.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const source = readFileSync(new URL('../src/config.ts', import.meta.url), 'utf8');

/** README table rows by variable name: { default, meaning }. */
const rows = new Map();
for (const line of readme.split('\n')) {
  const m = /^\| `([A-Z0-9_]+)` \| (`[^`]*`|empty) \| (.*) \|$/.exec(line);
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

test('every integer range src/config.ts checks is stated in its README row as "min to max"', () => {
  const MiB = 1024 * 1024;
  const value = (text) => {
    const t = text.trim().replace(/_/g, '');
    if (t === 'MiB') return MiB;
    const m = /^(\d+) \* MiB$/.exec(t);
    return m ? Number(m[1]) * MiB : Number(t);
  };
  const found = [...source.matchAll(/read\(env, '([A-Z0-9_]+)', integer\(([^,()]+), ([^,()]+)\)\)/g)];
  assert.ok(found.length >= 15, `only ${found.length} ranges found: the pattern no longer matches src/config.ts`);
  for (const [, name, lo, hi] of found) {
    const row = rows.get(name);
    assert.ok(row, `${name} has no row in the README table`);
    const range = `${value(lo)} to ${value(hi)}`;
    assert.ok(!Number.isNaN(value(lo)) && !Number.isNaN(value(hi)), `${name}: cannot read ${lo}, ${hi}`);
    assert.ok(row.meaning.includes(range), `${name}: README row does not say "${range}"`);
  }
});
