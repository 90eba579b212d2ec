// Resetting one pin without a restart: GET /pins and POST /pins/<id>/reset over real HTTP, behind the
// MCP token and the Origin/Content-Type guards like /reload, and cc-mcp pins / pin-reset. The gap: a
// reinstalled computer (its key gone) stayed refused until the whole bridge restarted, which forgot
// every other computer's pin too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestBridge, until, withBridge } from '../helpers.js';
import { attempt, request, sha } from './pins-helpers.js';
import { runCli } from '../../dist/cli/run.js';
import { parsePins } from '../../dist/link/pins-file.js';

const KEY = 'realKey_0123456789abcdefABCDEF-x';
const NEW = 'reinstalledKey_0123456789abcdefA';
const TOKEN = 'operator-token-0123456789abcdef';
const base = (bridge) => bridge.mcpUrl.replace(/\/mcp$/, '');

async function cli(args, env = {}) {
  const out = { stdout: '', stderr: '' };
  const code = await runCli(
    args,
    { out: (t) => (out.stdout += t), err: (t) => (out.stderr += t), readFile: (f) => readFile(f, 'utf8'), readStdin: async () => '', env, signal: new AbortController().signal },
    '0',
  );
  return { code, ...out };
}

test('bug: a reinstalled computer stayed refused until a restart; POST /pins/<id>/reset (with the MCP token) lets its new key pin the id, other pins stay, the pins file is rewritten', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'pins-reset-'));
  const file = join(dir, 'pins');
  const bridge = await startTestBridge({ MCP_AUTH_TOKEN: TOKEN, CC_LINK_PINS_FILE: file });
  // closed (its last pins written) before its directory is removed
  t.after(async () => {
    await bridge.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const auth = { authorization: `Bearer ${TOKEN}` };
  const old = await attempt(bridge, 4, KEY);
  const other = await attempt(bridge, 5, KEY);
  await old.c.close();
  // the reinstalled computer 4 has a new key: refused
  const before = await attempt(bridge, 4, NEW);
  assert.equal(before.first.code, 'key_mismatch');
  assert.match(before.first.error, /cc-mcp pin-reset 4 \(or POST \/pins\/4\/reset\)/);

  // without the token: 401, nothing changes
  const anonymous = await request(bridge, '/pins/4/reset');
  assert.equal(anonymous.status, 401);
  assert.equal((await request(bridge, '/pins', { method: 'GET' })).status, 401);
  assert.equal(bridge.pins.has(4), true);
  // a browser form post (no preflight) changes nothing either
  const form = await request(bridge, '/pins/4/reset', { headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=1' });
  assert.equal(form.status, 415);
  assert.equal(bridge.pins.has(4), true);
  // a foreign Origin is refused before anything
  const foreign = await request(bridge, '/pins/4/reset', { headers: { ...auth, origin: 'https://evil.example' } });
  assert.equal(foreign.status, 403);
  assert.equal(bridge.pins.has(4), true);

  const listed = await request(bridge, '/pins', { method: 'GET', headers: auth });
  assert.equal(listed.status, 200);
  assert.deepEqual(listed.body, { ok: true, strict: false, pinned: [4, 5], distrusted: [], max: 10000 });
  assert.ok(!JSON.stringify(listed.body).includes(sha(KEY)), 'no hash is shown');

  const reset = await request(bridge, '/pins/4/reset', { headers: { ...auth, 'content-type': 'application/json' } });
  assert.equal(reset.status, 200);
  assert.deepEqual(reset.body, { ok: true, computerId: 4, wasPinned: true, linked: false, closed: false, oldKeyDistrusted: true, message: 'computer 4: pin reset; the next hello with a new key pins it; its old key is refused until another key is pinned (cc-mcp pin-reset 4 --allow-old-key lets it in again)' });
  assert.ok(bridge.logs.some((l) => /computer 4: pin reset; the next hello with a new key pins it; its old key is refused until another key is pinned \(cc-mcp pin-reset 4 --allow-old-key lets it in again\) \(POST \/pins\/4\/reset from 127\.0\.0\.1:\d+\)/.test(l)), bridge.logs.join('\n'));
  await until(() => !readFileSync(file, 'utf8').includes('\n4 '));
  assert.deepEqual([...parsePins(readFileSync(file, 'utf8'), file, 10)], [[5, sha(KEY)]]);

  const after = await attempt(bridge, 4, NEW);
  assert.equal(after.first.type, 'hello-ok', 'the reinstalled computer links and pins the id anew');
  await until(() => readFileSync(file, 'utf8').includes(`4 ${sha(NEW)}`));
  const impostor = await attempt(bridge, 4, KEY);
  assert.equal(impostor.first.code, 'key_mismatch', 'the old key is refused now');
  const stillFive = await attempt(bridge, 5, NEW);
  assert.equal(stillFive.first.code, 'key_mismatch', "computer 5's pin was left alone");

  // the reset of a linked id closes its link, admitted with the key just forgotten (and says so;
  // test/link/pins-reset-live.test.js)
  const live = await request(bridge, '/pins/5/reset', { headers: auth });
  assert.equal(live.body.linked, true);
  assert.match(live.body.message, /^computer 5: pin reset; the next hello with a new key pins it; its old key is refused until another key is pinned \(cc-mcp pin-reset 5 --allow-old-key lets it in again\); its link from 127\.0\.0\.1:\d+ is closed \(4410 pin_reset\)$/);
  assert.equal((await other.c.closed).code, 4410);
  const again = await request(bridge, '/pins/5/reset', { headers: auth });
  assert.equal(again.body.wasPinned, false);
  assert.match(again.body.message, /^computer 5: was not pinned;/);
  await Promise.all([other.c.close(), after.c.close()]);
});

test('bug: a reset did not remember the key it stopped trusting, so a holder of the old key relinked first and was pinned again; now the reset distrusts that key (kept in the pins file across a restart) until another key is pinned or the operator allows it (--allow-old-key)', { timeout: 60_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'pins-distrust-'));
  const file = join(dir, 'pins');
  let bridge = await startTestBridge({ CC_LINK_PINS_FILE: file });
  // closed (its last pins written) before its directory is removed
  t.after(async () => {
    await bridge.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const first = await attempt(bridge, 4, KEY);
  assert.equal(first.first.type, 'hello-ok');
  await first.c.close();
  const reset = await request(bridge, '/pins/4/reset', { headers: { 'content-type': 'application/json' } });
  // the holder of the old key tries first: refused, and the id stays unpinned
  const hostile = await attempt(bridge, 4, KEY);
  assert.equal(hostile.first.type, 'hello-error', 'the old key is not pinned again');
  assert.equal(reset.body.oldKeyDistrusted, true);
  assert.equal(hostile.first.code, 'key_mismatch');
  assert.equal(
    hostile.first.error,
    "computer id 4 was reset by the bridge's operator, and this hello carries the key that reset stopped trusting (mcp.key): the id links only with a new key now. To give this computer a new key: set mcp.key new, then start mcp-computer again. If this computer was not reinstalled and is to keep its key, the operator lets the key in again with: cc-mcp pin-reset 4 --allow-old-key (or POST /pins/4/reset?allowOldKey=true).",
  );
  assert.deepEqual(await hostile.c.closed, { code: 4409, reason: 'key_mismatch: this key was distrusted by a pin reset; the operator runs cc-mcp pin-reset 4 --allow-old-key' });
  assert.equal(bridge.pins.has(4), false);
  assert.equal(bridge.metrics.linksRefused.get('key_distrusted'), 1);
  assert.ok(bridge.logs.some((l) => /link from 127\.0\.0\.1:\d+ \(computer 4\) refused: the key its pin reset stopped trusting$/.test(l)), bridge.logs.join('\n'));
  assert.ok(!bridge.logs.some((l) => l.includes(KEY) || l.includes(sha(KEY))), 'neither the key nor its hash is logged');
  assert.match(readFileSync(file, 'utf8'), new RegExp(`^# distrusted 4 ${sha(KEY)}$`, 'm'));
  const metrics = await (await fetch(bridge.mcpUrl.replace(/\/mcp$/, '/metrics'))).text();
  assert.match(metrics, /^cc_link_pins_distrusted 1$/m);
  assert.deepEqual((await request(bridge, '/pins', { method: 'GET' })).body.distrusted, [4]);

  // a restart keeps the distrust
  await bridge.close();
  bridge = await startTestBridge({ CC_LINK_PINS_FILE: file });
  assert.ok(bridge.logs.some((l) => l.includes(`1 key distrusted by a pin reset kept from ${file}`)), bridge.logs.join('\n'));
  assert.equal((await attempt(bridge, 4, KEY)).first.code, 'key_mismatch', 'still refused after the restart');
  assert.equal(bridge.pins.has(4), false);

  // the reinstalled computer (a new key) pins the id; the distrust has done its work and leaves the file
  const fresh = await attempt(bridge, 4, NEW);
  assert.equal(fresh.first.type, 'hello-ok');
  const text = readFileSync(file, 'utf8');
  assert.ok(text.includes(`\n4 ${sha(NEW)}\n`) && !text.includes('# distrusted'), text);
  assert.equal(bridge.pins.distrustedCount, 0);
  assert.equal((await attempt(bridge, 4, KEY)).first.code, 'key_mismatch', 'the old key stays out: the id is pinned to the new one');
  await fresh.c.close();
});

test('strict: a reset distrusts the old key, so it cannot take the opening the reset made; a new key can; --allow-old-key lets the old one take it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'pins-distrust-strict-'));
  const file = join(dir, 'pins');
  writeFileSync(file, `1 ${sha(KEY)}\n2 ${sha(KEY)}\n`, { mode: 0o600 });
  const bridge = await startTestBridge({ CC_LINK_PIN: 'strict', CC_LINK_PINS_FILE: file });
  t.after(async () => {
    await bridge.close();
    rmSync(dir, { recursive: true, force: true });
  });
  assert.equal((await request(bridge, '/pins/1/reset')).body.oldKeyDistrusted, true);
  const hostile = await attempt(bridge, 1, KEY);
  assert.equal(hostile.first.code, 'key_mismatch');
  assert.match(hostile.first.error, /set mcp\.key new, then start mcp-computer again \(CC_LINK_PIN=strict: while the id is open, cc-mcp pin-reset 1\)\. /);
  assert.equal(bridge.pins.isOpen(1), true, 'the opening is not used up');
  const fresh = await attempt(bridge, 1, NEW);
  assert.equal(fresh.first.type, 'hello-ok');
  // the operator's choice: id 2's computer keeps its key
  const allowed = await request(bridge, '/pins/2/reset?allowOldKey=true');
  assert.equal(allowed.body.oldKeyDistrusted, false);
  const kept = await attempt(bridge, 2, KEY);
  assert.equal(kept.first.type, 'hello-ok');
  // a query that is not allowOldKey=true changes nothing
  const bad = await request(bridge, '/pins/2/reset?allowOldKey=yes');
  assert.equal(bad.status, 400);
  assert.equal(bridge.pins.has(2), true);
  await Promise.all([fresh.c.close(), kept.c.close()]);
});

test('POST /pins/<id>/reset: a bad id is 400 (never echoed), another path 404, another method 405, CC_LINK_PIN=off 409', async () => {
  await withBridge({}, async (bridge) => {
    const long = '9'.repeat(500);
    const bad = await request(bridge, `/pins/${long}/reset`);
    assert.equal(bad.status, 400);
    assert.match(bad.body.message, /must be a whole number >= 0 \(500 characters given\)/);
    assert.ok(!JSON.stringify(bad.body).includes(long));
    assert.equal((await request(bridge, '/pins/-1/reset')).status, 400);
    assert.equal((await request(bridge, '/pins/4')).status, 404);
    assert.equal((await request(bridge, '/pins/4/reset/more')).status, 404);
    // the only query it takes is allowOldKey=true, alone
    for (const query of ['allowOldKey=true&x=1', 'x=1&allowOldKey=true', 'allowOldKey=yes', 'x=1']) {
      const refused = await request(bridge, `/pins/4/reset?${query}`);
      assert.equal(refused.status, 400, query);
      assert.equal(refused.body.error, 'bad query', query);
    }
    const get = await request(bridge, '/pins/4/reset', { method: 'GET' });
    assert.equal(get.status, 405);
    assert.equal(get.headers.get('allow'), 'POST');
    const del = await request(bridge, '/pins', { method: 'DELETE' });
    assert.equal(del.status, 405);
    assert.equal(del.headers.get('allow'), 'GET, HEAD');
    assert.deepEqual((await request(bridge, '/pins', { method: 'GET' })).body, { ok: true, strict: false, pinned: [], distrusted: [], max: 10000 });
  });
  await withBridge({ CC_LINK_PIN: 'off' }, async (bridge) => {
    const off = await request(bridge, '/pins/4/reset');
    assert.equal(off.status, 409);
    assert.match(off.body.error, /^CC_LINK_PIN is off/);
    assert.equal((await request(bridge, '/pins', { method: 'GET' })).status, 409);
  });
});

test('cc-mcp pins and pin-reset: the same operator path over HTTP with CC_MCP_TOKEN; a refusal exits 1, usage 2, a refused token or no bridge 3', async () => {
  await withBridge({ MCP_AUTH_TOKEN: TOKEN }, async (bridge) => {
    const url = ['--url', bridge.mcpUrl];
    const env = { CC_MCP_TOKEN: TOKEN };
    assert.deepEqual(await cli([...url, 'pins'], env), { code: 0, stdout: 'no computer id is pinned\n', stderr: '' });
    const a = await attempt(bridge, 3, KEY);
    const b = await attempt(bridge, 11, NEW);
    assert.deepEqual(await cli([...url, 'pins'], env), { code: 0, stdout: '2 computer ids pinned: 3 11\n', stderr: '' });
    const json = await cli([...url, '--json', 'pins'], env);
    assert.deepEqual(JSON.parse(json.stdout), { ok: true, strict: false, pinned: [3, 11], distrusted: [], max: 10000 });
    const reset = await cli([...url, 'pin-reset', '3'], env);
    assert.equal(reset.code, 0);
    assert.match(reset.stdout, /^computer 3: pin reset; the next hello with a new key pins it; its old key is refused until another key is pinned \(cc-mcp pin-reset 3 --allow-old-key lets it in again\); its link from 127\.0\.0\.1:\d+ is closed \(4410 pin_reset\)\n$/);
    assert.deepEqual(await cli([...url, 'pins'], env), { code: 0, stdout: '1 computer id pinned: 11; a reset distrusts the old key of: 3\n', stderr: '' });
    assert.equal((await attempt(bridge, 3, KEY)).first.code, 'key_mismatch', 'the old key is distrusted');
    // --allow-old-key: the operator lets the key in again (POST /pins/3/reset?allowOldKey=true)
    const allow = await cli([...url, 'pin-reset', '--allow-old-key', '3'], env);
    assert.deepEqual(allow, { code: 0, stdout: 'computer 3: was not pinned; the next hello with a key pins it; the key an earlier reset distrusted may pin it again (--allow-old-key)\n', stderr: '' });
    assert.deepEqual(await cli([...url, 'pins'], env), { code: 0, stdout: '1 computer id pinned: 11\n', stderr: '' });
    const back = await attempt(bridge, 3, KEY);
    assert.equal(back.first.type, 'hello-ok');
    await back.c.close();
    const noToken = await cli([...url, 'pin-reset', '11']);
    assert.equal(noToken.code, 3, 'a refused token is exit 3, as for every command');
    assert.match(noToken.stderr, /^cc-mcp: the bridge at http:\/\/127\.0\.0\.1:\d+ needs a token \(it has MCP_AUTH_TOKEN set\) and cc-mcp sent none \(HTTP 401\): set CC_MCP_TOKEN/);
    assert.equal(bridge.pins.has(11), true);
    const off = await cli(['--url', bridge.mcpUrl, 'pin-reset', '99999999'], env);
    assert.equal(off.code, 0);
    assert.match(off.stdout, /^computer 99999999: was not pinned/);
    for (const args of [['pin-reset'], ['pin-reset', 'x'], ['pin-reset', '1', '2'], ['pins', 'extra'], ['pins', '--allow-old-key']]) {
      const usage = await cli([...url, ...args], env);
      assert.equal(usage.code, 2, args.join(' '));
    }
    await Promise.all([a.c.close(), b.c.close()]);
  });
  await withBridge({ CC_LINK_PIN: 'off' }, async (bridge) => {
    const refused = await cli(['--url', bridge.mcpUrl, 'pin-reset', '3']);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /^cc-mcp: the bridge refused \(HTTP 409\): CC_LINK_PIN is off/);
    // the link port answers HTTP, but it is not the bridge's MCP listener
    const notJson = await cli(['--url', `${bridge.linkUrl.replace(/^ws:/, 'http:')}/mcp`, 'pins']);
    assert.equal(notJson.code, 3, JSON.stringify(notJson));
    assert.match(notJson.stderr, /\/pins answered HTTP \d+ without JSON; is this a cc-mcp-bridge\?/);
  });
  const gone = await cli(['--url', 'http://127.0.0.1:1/mcp', 'pins']);
  assert.equal(gone.code, 3);
  assert.match(gone.stderr, /cannot reach the bridge at http:\/\/127\.0\.0\.1:1/);
});

test('list-computers and GET /computers say whether each id is pinned (true / false, null with CC_LINK_PIN=off) and never show a key or its hash', async () => {
  const { callTool } = await import('../helpers.js');
  await withBridge({}, async (bridge) => {
    const keyed = await attempt(bridge, 6, KEY);
    const keyless = await attempt(bridge, 8, undefined);
    const result = await callTool(bridge, 'list-computers');
    assert.deepEqual(result.structuredContent.computers.map((c) => [c.computerId, c.pinned]), [
      [6, true],
      [8, false],
    ]);
    const lines = result.content[0].text.split('\n');
    assert.match(lines[0], /^6 \(Label: null\): .*; id pinned to its key$/);
    assert.match(lines[1], /^8 \(Label: null\): .*; id not pinned$/);
    const rest = await (await fetch(base(bridge) + '/computers')).json();
    assert.deepEqual(rest.map((c) => [c.computerId, c.pinned]), [
      [6, true],
      [8, false],
    ]);
    const everything = JSON.stringify(result) + JSON.stringify(rest);
    assert.ok(!everything.includes(KEY) && !everything.includes(sha(KEY)) && !everything.includes(createHash('sha256').update(KEY).digest('base64')));
    // a reset shows at once; the live link stays
    await request(bridge, '/pins/6/reset');
    assert.equal((await callTool(bridge, 'list-computers')).structuredContent.computers[0].pinned, false);
    await Promise.all([keyed.c.close(), keyless.c.close()]);
  });
  await withBridge({ CC_LINK_PIN: 'off' }, async (bridge) => {
    const keyed = await attempt(bridge, 6, KEY);
    const result = await callTool(bridge, 'list-computers');
    assert.equal(result.structuredContent.computers[0].pinned, null);
    assert.doesNotMatch(result.content[0].text, /pinned/);
    await keyed.c.close();
  });
});
