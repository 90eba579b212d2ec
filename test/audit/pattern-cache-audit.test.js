// The bridge's caches of compiled `pattern`s (src/tools/schema-pattern.ts) hold at most 1,000 entries;
// a pattern longer than pattern-safety.ts's MAX_PATTERN_LENGTH (never run) is not one of them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';

// in a child with --expose-gc, so the heap after a full collection is what the caches keep
const SCRIPT = `
const { runnablePattern } = await import(${JSON.stringify(new URL('../../dist/tools/schema-pattern.js', import.meta.url).href)});
const { validate } = await import(${JSON.stringify(new URL('../../dist/tools/schema.js', import.meta.url).href)});
const { unrunPatterns } = await import(${JSON.stringify(new URL('../../dist/upstream/tool-check.js', import.meta.url).href)});
const used = () => { gc(); const m = process.memoryUsage(); return m.heapUsed + m.external; };
const before = used();
const problems = new Set();
for (let i = 0; i < 100; i++) {
  // a distinct flat 1 MB pattern each time, as 100 re-listings of an upstream tool could bring
  const pattern = Buffer.alloc(1_000_000, 97 + (i % 26)).toString('latin1') + i;
  const schema = { type: 'object', properties: { s: { type: 'string', pattern } } };
  problems.add(typeof runnablePattern(pattern));
  unrunPatterns(schema);
  validate({ s: 'x' }, schema, 'arguments', false);
}
console.log(JSON.stringify({ grownMB: (used() - before) / 1e6, problems: [...problems] }));
`;

test('bug: an upstream\'s long patterns were compiled and kept in the pattern caches (up to 1,000 of them, each as long as a listing may be: 100 distinct 1 MB patterns kept 103 MB after a full GC); now a pattern over 4,096 characters is neither compiled for running nor kept', () => {
  const child = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', SCRIPT], { encoding: 'utf8' });
  assert.equal(child.status, 0, child.stderr);
  const { grownMB, problems } = JSON.parse(child.stdout);
  assert.deepEqual(problems, ['string'], 'each is refused (not run), as before');
  assert.ok(grownMB < 50, `${grownMB.toFixed(1)} MB kept after 100 patterns of 1 MB`);
});
