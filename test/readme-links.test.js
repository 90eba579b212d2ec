// README's own links: every "](#anchor)" names a heading (GitHub's slug of it), so the table of contents
// and the cross-references cannot point at a section that was renamed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

/** GitHub's anchors for the headings outside code blocks: lower case, punctuation dropped, spaces to -, repeats -1, -2. */
function anchors(text) {
  const seen = new Map();
  const out = new Set();
  let fence = false;
  for (const line of text.split('\n')) {
    if (/^```/.test(line)) fence = !fence;
    const m = fence ? null : /^#{1,6} (.+)$/.exec(line);
    if (!m) continue;
    const base = m[1].trim().toLowerCase().replace(/[^\p{L}\p{N}_\- ]/gu, '').replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

test('the slug rule matches GitHub on headings with code, punctuation and symbols', () => {
  const got = anchors('# A\n## Set-up (Node.js >= 20)\n### `exec-lua`\n```\n# not a heading\n```\n## Operator CLI: `cc-mcp`\n# A\n');
  assert.deepEqual([...got], ['a', 'set-up-nodejs--20', 'exec-lua', 'operator-cli-cc-mcp', 'a-1']);
});

test('every #anchor link in the README names one of its headings', () => {
  const known = anchors(readme);
  const links = [...readme.matchAll(/\]\(#([^)\s]+)\)/g)].map((m) => m[1]);
  assert.ok(links.length >= 50, `only ${links.length} links found`);
  for (const link of links) assert.ok(known.has(link), `README links to #${link}, which is no heading`);
});

test('the README opens with a table of contents and a security summary that links the full section', () => {
  const top = readme.slice(0, readme.indexOf('\n## '));
  for (const section of readme.matchAll(/^## (.+)$/gm)) {
    const slug = [...anchors(`## ${section[1]}`)][0];
    assert.ok(top.includes(`](#${slug})`), `the contents at the top do not link "## ${section[1]}"`);
  }
  assert.match(top, /### Security at a glance/);
  assert.ok(top.includes('](#security-the-trust-boundary)'));
});
