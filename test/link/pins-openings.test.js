// CC_LINK_PIN=strict: an opening (cc-mcp pin-reset <id>: the id takes its next keyed hello until a
// given time) is kept in CC_LINK_PINS_FILE, as a `# open <id> until <ISO time>` comment line that an
// older bridge or one without strict reads as a comment. The bug: openings lived in memory only, so a
// bridge restarted inside one (a crash, an upgrade) refused the computer the operator had just let in,
// and a reset of a pinned id (a reinstalled computer) left the id neither pinned nor open.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestBridge, until } from '../helpers.js';
import { attempt, request, sha } from './pins-helpers.js';
import { startProcess, stop, tempDir } from '../surfaces/bridge-process.js';

const KEY = 'realKey_0123456789abcdefABCDEF-x';
const NEW = 'newComputerKey_0123456789abcdefA';

test('bug: an enrollment opening was lost when the bridge restarted; the pins file keeps it (written before the reset is answered), so a bridge killed right after the answer still lets the computer in', async (t) => {
  const space = tempDir(t);
  const file = join(space.dir, 'pins');
  writeFileSync(file, `1 ${sha(KEY)}\n`, { mode: 0o600 });
  const env = { CC_LINK_PIN: 'strict', CC_LINK_PINS_FILE: file, LOG_LEVEL: 'info' };
  const first = await startProcess(space, env);
  const reset = await fetch(first.mcpUrl.replace(/\/mcp$/, '/pins/5/reset'), { method: 'POST' }).then((r) => r.json());
  assert.match(reset.openUntil, /^\d{4}-\d\d-\d\dT/);
  // on disk when answered
  assert.ok(readFileSync(file, 'utf8').includes(`\n# open 5 until ${reset.openUntil}\n`), readFileSync(file, 'utf8'));
  // a reinstalled computer: its pin is reset, and the opening for its new key is kept too
  const reinstall = await fetch(first.mcpUrl.replace(/\/mcp$/, '/pins/1/reset'), { method: 'POST' }).then((r) => r.json());
  assert.equal(reinstall.wasPinned, true);
  first.kill('SIGKILL');
  await first.exited;

  const second = await startProcess(space, env);
  assert.match(second.out.stdout + second.out.stderr, /2 enrollment openings kept from \S+pins\n/);
  const linkUrl = /^Computer link: (ws:\/\/\S+) /m.exec(second.out.stdout)[1];
  const five = await attempt({ linkUrl }, 5, NEW);
  assert.equal(five.first.type, 'hello-ok', 'the opening made before the restart lets the computer in');
  const one = await attempt({ linkUrl }, 1, NEW);
  assert.equal(one.first.type, 'hello-ok', 'the reinstalled computer links with its new key');
  assert.equal((await attempt({ linkUrl }, 1, KEY)).first.code, 'not_enrolled', 'the old key stays refused (strict: the same answer as an id not enrolled)');
  assert.equal((await attempt({ linkUrl }, 6, NEW)).first.code, 'not_enrolled', 'nothing else was let in');
  // the used openings are gone from the file, the new pins are in it
  await Promise.all([five.c.close(), one.c.close()]);
  await stop(second);
  const text = readFileSync(file, 'utf8');
  assert.doesNotMatch(text, /# open/);
  assert.ok(text.includes(`\n1 ${sha(NEW)}\n5 ${sha(NEW)}\n`), text);
});

test('strict: openings read from the file: an ended one, one for an id pinned since and one past CC_LINK_MAX_PINS are left out; one ending further away than CC_LINK_ENROLL_MS is brought in; other comments are comments', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'pins-openings-'));
  const file = join(dir, 'pins');
  const iso = (ms) => new Date(Date.now() + ms).toISOString();
  writeFileSync(
    file,
    [
      `1 ${sha(KEY)}`,
      `# open 2 until ${iso(3600_000)}`,
      `# open 3 until ${iso(-60_000)}`,
      `# open 1 until ${iso(3600_000)}`,
      `# open 4 until ${iso(3600_000)}`,
      '# open 5 until tomorrow',
      '# a comment',
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  const bridge = await startTestBridge({ CC_LINK_PIN: 'strict', CC_LINK_PINS_FILE: file, CC_LINK_ENROLL_MS: '60000', CC_LINK_MAX_PINS: '2' });
  t.after(async () => {
    await bridge.close();
    rmSync(dir, { recursive: true, force: true });
  });
  assert.ok(bridge.logs.some((l) => /1 enrollment opening kept from \S+pins \(3 ended, pinned since or past CC_LINK_MAX_PINS: left out\)/.test(l)), bridge.logs.join('\n'));
  const openings = bridge.pins.openings();
  assert.deepEqual(openings.map(([id]) => id), [2]);
  assert.ok(openings[0][1] <= Date.now() + 60_000, 'no longer than CC_LINK_ENROLL_MS from the start');
  for (const id of [3, 4, 5]) assert.equal((await attempt(bridge, id, NEW)).first.code, 'not_enrolled', `${id} is not open`);
  const two = await attempt(bridge, 2, NEW);
  assert.equal(two.first.type, 'hello-ok');
  await until(() => readFileSync(file, 'utf8').includes(`2 ${sha(NEW)}`));
  assert.doesNotMatch(readFileSync(file, 'utf8'), /# open/);
  await two.c.close();
});

test('CC_LINK_PIN=on: openings in the file are left out (said in the log) and dropped at the next write; a reset there is written before its answer', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'pins-openings-'));
  const file = join(dir, 'pins');
  writeFileSync(file, `1 ${sha(KEY)}\n# open 2 until ${new Date(Date.now() + 60_000).toISOString()}\n`, { mode: 0o600 });
  const bridge = await startTestBridge({ CC_LINK_PINS_FILE: file });
  t.after(async () => {
    await bridge.close();
    rmSync(dir, { recursive: true, force: true });
  });
  assert.ok(bridge.logs.some((l) => /1 enrollment opening in \S+pins left out: CC_LINK_PIN is not strict/.test(l)), bridge.logs.join('\n'));
  assert.deepEqual(bridge.pins.openings(), []);
  const reset = await request(bridge, '/pins/1/reset');
  assert.equal(reset.body.wasPinned, true);
  // written when answered
  const text = readFileSync(file, 'utf8');
  assert.doesNotMatch(text, /\n1 /);
  assert.doesNotMatch(text, /# open/);
});
