// What a pin reset (POST /pins/<id>/reset, cc-mcp pin-reset) does to the id's live link. The reset
// says "this id's key is no longer trusted", and the live link was admitted with exactly that key, so
// the link is closed (4410 pin_reset) and its calls in flight end; the reset distrusts that key, so the
// computer started again with it is refused until the operator lets the key in again (--allow-old-key). Before, the link was kept: the bridge went on
// sending calls to a computer whose key the operator had just stopped trusting.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { callTool, startTestBridge, until } from '../helpers.js';
import { attempt, request, sha } from './pins-helpers.js';

const KEY = 'realKey_0123456789abcdefABCDEF-x';
const NEW = 'reinstalledKey_0123456789abcdefA';

test('bug: a pin reset kept the live link admitted with the key it forgot; it is closed 4410 pin_reset, its calls in flight end; started again with that key it is refused until the operator allows the old key', async (t) => {
  const bridge = await startTestBridge();
  t.after(() => bridge.close());
  const live = await attempt(bridge, 7, KEY);
  assert.equal(live.first.type, 'hello-ok');
  // a call the computer never answers, in flight when the operator resets the pin
  live.c.onRequest = () => null;
  const call = callTool(bridge, 'exec-lua', { computerId: 7, code: 'sleep(60)' });
  await live.c.next((f) => f.type === 'request' && f.method === 'exec-lua');

  const reset = await request(bridge, '/pins/7/reset');
  assert.equal(reset.status, 200);
  assert.equal(reset.body.linked, true);
  assert.equal(reset.body.closed, true);
  assert.match(reset.body.message, /^computer 7: pin reset; the next hello with a new key pins it; its old key is refused until another key is pinned \(cc-mcp pin-reset 7 --allow-old-key lets it in again\); its link from 127\.0\.0\.1:\d+ is closed \(4410 pin_reset\)$/);
  assert.equal(reset.body.oldKeyDistrusted, true);
  // gone from the bridge at once, not after the close handshake
  assert.equal(bridge.links.get(7), undefined);
  assert.deepEqual(await live.c.closed, { code: 4410, reason: 'pin_reset: its key is no longer trusted here; give this computer a new key (set mcp.key new), then start mcp-computer again' });
  const ended = await call;
  assert.equal(ended.isError, true);
  assert.match(ended.content[0].text, /its pin was reset by the operator/);
  assert.ok(bridge.logs.some((l) => /computer 7: pin reset; .* is closed \(4410 pin_reset\) \(POST \/pins\/7\/reset from 127\.0\.0\.1:\d+\)/.test(l)), bridge.logs.join('\n'));
  assert.equal(bridge.pins.has(7), false);

  // started again with the same key: refused, the key is distrusted
  const distrusted = await attempt(bridge, 7, KEY);
  assert.equal(distrusted.first.code, 'key_mismatch');
  assert.equal(bridge.pins.has(7), false);
  // the operator meant to keep this computer: --allow-old-key lifts the distrust, the key pins the id again
  const allow = await request(bridge, '/pins/7/reset?allowOldKey=true');
  assert.equal(allow.body.oldKeyDistrusted, false);
  assert.match(allow.body.message, /^computer 7: was not pinned; the next hello with a key pins it; the key an earlier reset distrusted may pin it again \(--allow-old-key\)$/);
  const again = await attempt(bridge, 7, KEY);
  assert.equal(again.first.type, 'hello-ok');
  assert.equal(bridge.pins.has(7), true);
  assert.equal((await callTool(bridge, 'probe-computers')).content[0].text, 'pong from 7 (Label: null)');

  // an id that was not pinned (a keyless program) keeps its link: no trusted key was forgotten
  const keyless = await attempt(bridge, 8, undefined);
  const kept = await request(bridge, '/pins/8/reset');
  assert.deepEqual([kept.body.wasPinned, kept.body.linked, kept.body.closed], [false, true, false]);
  assert.match(kept.body.message, /^computer 8: was not pinned; the next hello with a key pins it; its link from 127\.0\.0\.1:\d+ is kept \(it was not pinned\)$/);
  assert.ok(bridge.links.get(8));
  assert.equal(keyless.c.ws.readyState, 1);
  // a reset of an id that is not linked says nothing about a link
  const none = await request(bridge, '/pins/9/reset');
  assert.deepEqual([none.body.linked, none.body.closed], [false, false]);
  await Promise.all([again.c.close(), keyless.c.close()]);
});

test('strict: a reset closes the enrolled live link, and the reinstalled computer (a new key) takes the opening; the old key is refused after it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'pins-reset-live-'));
  const file = join(dir, 'pins');
  writeFileSync(file, `1 ${sha(KEY)}\n`, { mode: 0o600 });
  const bridge = await startTestBridge({ CC_LINK_PIN: 'strict', CC_LINK_PINS_FILE: file });
  t.after(async () => {
    await bridge.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const old = await attempt(bridge, 1, KEY);
  assert.equal(old.first.type, 'hello-ok');
  const reset = await request(bridge, '/pins/1/reset');
  assert.equal(reset.body.closed, true);
  assert.match(reset.body.message, /pins it \(CC_LINK_PIN=strict\); its old key is refused until another key is pinned \(cc-mcp pin-reset 1 --allow-old-key lets it in again\); its link from 127\.0\.0\.1:\d+ is closed \(4410 pin_reset\)$/);
  assert.equal((await old.c.closed).code, 4410);
  const fresh = await attempt(bridge, 1, NEW);
  assert.equal(fresh.first.type, 'hello-ok');
  assert.equal((await attempt(bridge, 1, KEY)).first.code, 'not_enrolled', 'strict: the same answer as an id not enrolled');
  await until(() => bridge.pins.has(1) && !bridge.pins.isOpen(1));
  await fresh.c.close();
});
