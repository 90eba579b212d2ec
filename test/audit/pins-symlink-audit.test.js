// CC_LINK_PINS_FILE named through a symlink (a file kept on another volume, a config directory of
// links): the bridge writes the file the link points to and leaves the link as it is.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeComputer, until, withBridge } from '../helpers.js';

test('bug: a CC_LINK_PINS_FILE that is a symlink was replaced by a regular file at the first pin (the rename went over the link), so the file it pointed to never got a pin; now the target is written and the link kept', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pins-link-'));
  try {
    const target = join(dir, 'kept', 'pins');
    const link = join(dir, 'pins');
    mkdirSync(join(dir, 'kept'));
    writeFileSync(target, '', { mode: 0o600 });
    symlinkSync(join('kept', 'pins'), link);
    await withBridge({ CC_LINK_PINS_FILE: link }, async (bridge) => {
      const computer = new FakeComputer(bridge.linkUrl, { computerId: 5 });
      assert.equal((await computer.link({ type: 'hello', computerId: 5, key: 'k'.repeat(32) })).type, 'hello-ok');
      await until(() => /^5 [0-9a-f]{64}$/m.test(readFileSync(link, 'utf8')));
      await computer.close();
    });
    assert.ok(lstatSync(link).isSymbolicLink(), 'the link is still a link');
    assert.match(readFileSync(target, 'utf8'), /^5 [0-9a-f]{64}$/m);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
