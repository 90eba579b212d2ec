// Resetting one pin without a restart: GET /pins and POST /pins/<id>/reset over real HTTP, behind the
// MCP token and the Origin/Content-Type guards like /reload, and cc-mcp pins / pin-reset. The gap: a
// reinstalled computer (its key gone) stayed refused until the whole bridge restarted, which forgot
// every other computer's pin too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
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
  assert.deepEqual(listed.body, { ok: true, strict: false, pinned: [4, 5], max: 10000 });
  assert.ok(!JSON.stringify(listed.body).includes(sha(KEY)), 'no hash is shown');

  const reset = await request(bridge, '/pins/4/reset', { headers: { ...auth, 'content-type': 'application/json' } });
  assert.equal(reset.status, 200);
  assert.deepEqual(reset.body, { ok: true, computerId: 4, wasPinned: true, linked: false, closed: false, message: 'computer 4: pin reset; the next hello with a key pins it' });
  assert.ok(bridge.logs.some((l) => /computer 4: pin reset; the next hello with a key pins it \(POST \/pins\/4\/reset from 127\.0\.0\.1:\d+\)/.test(l)), bridge.logs.join('\n'));
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
  assert.match(live.body.message, /^computer 5: pin reset; the next hello with a key pins it; its link from 127\.0\.0\.1:\d+ is closed \(4410 pin_reset\)$/);
  assert.equal((await other.c.closed).code, 4410);
  const again = await request(bridge, '/pins/5/reset', { headers: auth });
  assert.equal(again.body.wasPinned, false);
  assert.match(again.body.message, /^computer 5: was not pinned;/);
  await Promise.all([other.c.close(), after.c.close()]);
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
    const get = await request(bridge, '/pins/4/reset', { method: 'GET' });
    assert.equal(get.status, 405);
    assert.equal(get.headers.get('allow'), 'POST');
    const del = await request(bridge, '/pins', { method: 'DELETE' });
    assert.equal(del.status, 405);
    assert.equal(del.headers.get('allow'), 'GET, HEAD');
    assert.deepEqual((await request(bridge, '/pins', { method: 'GET' })).body, { ok: true, strict: false, pinned: [], max: 10000 });
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
    assert.deepEqual(JSON.parse(json.stdout), { ok: true, strict: false, pinned: [3, 11], max: 10000 });
    const reset = await cli([...url, 'pin-reset', '3'], env);
    assert.equal(reset.code, 0);
    assert.match(reset.stdout, /^computer 3: pin reset; the next hello with a key pins it; its link from 127\.0\.0\.1:\d+ is closed \(4410 pin_reset\)\n$/);
    assert.deepEqual(await cli([...url, 'pins'], env), { code: 0, stdout: '1 computer id pinned: 11\n', stderr: '' });
    const noToken = await cli([...url, 'pin-reset', '11']);
    assert.equal(noToken.code, 3, 'a refused token is exit 3, as for every command');
    assert.match(noToken.stderr, /^cc-mcp: the bridge refused \(HTTP 401\): unauthorized: Unauthorized/);
    assert.equal(bridge.pins.has(11), true);
    const off = await cli(['--url', bridge.mcpUrl, 'pin-reset', '99999999'], env);
    assert.equal(off.code, 0);
    assert.match(off.stdout, /^computer 99999999: was not pinned/);
    for (const args of [['pin-reset'], ['pin-reset', 'x'], ['pin-reset', '1', '2'], ['pins', 'extra']]) {
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
