// Adversarial tests of the pins (CC_LINK_PINS_FILE, CC_LINK_PIN=strict, GET /pins, POST /pins/<id>/reset)
// from what a computer on the link port and a caller on the MCP port can send.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeComputer, startTestBridge, until } from '../helpers.js';
import { attempt, request, sha } from '../link/pins-helpers.js';
import { readPinsFile } from '../../dist/link/pins-file.js';

const KEY = 'realKey_0123456789abcdefABCDEF-x';
const OTHER = 'impostorKey_0123456789abcdefABCD';
const TOKEN = 'operator-token-0123456789abcdef';

/** A temp dir removed after the test, after the bridges registered with `onClose` are closed (t.after runs first-registered-first). */
function tempDir(t) {
  const dir = mkdtempSync(join(tmpdir(), 'pins-audit-'));
  const closers = [];
  t.after(async () => {
    for (const close of closers) await close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { dir, onClose: (close) => closers.push(close) };
}

test('bug: a hello with a 16-digit computer id (a safe integer) was pinned and written, and the next start refused the pins file (exit 2); nor could the pin be reset', async (t) => {
  const { dir, onClose } = tempDir(t);
  const file = join(dir, 'pins');
  const env = { CC_LINK_PINS_FILE: file, MCP_AUTH_TOKEN: TOKEN };
  const big = Number.MAX_SAFE_INTEGER; // 9007199254740991: 16 digits, accepted by the hello
  const first = await startTestBridge(env);
  onClose(() => first.close());
  const hostile = await attempt(first, big, OTHER);
  assert.equal(hostile.first.type, 'hello-ok');
  const real = await attempt(first, 3, KEY);
  assert.equal(real.first.type, 'hello-ok');
  await until(() => {
    try {
      return readFileSync(file, 'utf8').includes(`3 ${sha(KEY)}`) && readFileSync(file, 'utf8').includes(`${big} `);
    } catch {
      return false;
    }
  });
  await hostile.c.close();
  await real.c.close();
  await first.close();
  // what the next start reads: the file the bridge wrote must parse
  const loaded = readPinsFile(file, 10_000);
  assert.deepEqual([...loaded.pins.keys()].sort((a, b) => a - b), [3, big]);
  const second = await startTestBridge(env);
  onClose(() => second.close());
  const impostor = await attempt(second, 3, OTHER);
  assert.equal(impostor.first.code, 'key_mismatch', 'the other pins survive the restart');
  // the operator can reset the id the bridge pinned
  const auth = { authorization: `Bearer ${TOKEN}` };
  const reset = await request(second, `/pins/${big}/reset`, { headers: auth });
  assert.equal(reset.status, 200, JSON.stringify(reset.body));
  assert.equal(reset.body.computerId, big);
  assert.equal(reset.body.wasPinned, true);
  // one past the safe integers is not an id: 400, and not a lossy rounding to another id
  const past = await request(second, `/pins/${big + 1}/reset`, { headers: auth });
  assert.equal(past.status, 400);
  const lines = await until(() => {
    const text = readFileSync(file, 'utf8');
    return !text.includes(`\n${big} `) && text;
  });
  assert.match(lines, new RegExp(`^3 ${sha(KEY)}$`, 'm'));
});

test('pins file under a seeded storm of hostile hellos, keyed links and resets racing its writes: after the dust settles the file is a valid parse of the table, within CC_LINK_MAX_PINS, and the next start reads it', async (t) => {
  const { prng, fuzzSeed, ODD_STRINGS, ODD_NUMBER_TEXTS } = await import('../fuzz/lib.js');
  const seed = fuzzSeed(4242);
  const r = prng(seed);
  const { dir, onClose } = tempDir(t);
  const file = join(dir, 'pins');
  const MAX = 6;
  const env = { CC_LINK_PINS_FILE: file, MCP_AUTH_TOKEN: TOKEN, CC_LINK_MAX_PINS: String(MAX) };
  const bridge = await startTestBridge(env);
  onClose(() => bridge.close());
  const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
  const keys = Array.from({ length: 4 }, (_, i) => `stormKey_${i}_0123456789abcdefABCD`);
  const oddIds = [-1, -0.5, 1.5, Number.MAX_SAFE_INTEGER + 2, 1e300, '7', null, true, [], {}, '__proto__'];
  const oddHelloTexts = [
    ...ODD_NUMBER_TEXTS.map((n) => `{"type":"hello","computerId":${n},"key":"${keys[0]}"}`),
    `{"type":"hello","computerId":1,"key":"${keys[0]}","__proto__":{"key":"x"}}`,
    `{"type":"hello","computerId":1,"computerId":2,"key":"${keys[1]}"}`,
  ];
  const sockets = [];
  const ops = [];
  for (let i = 0; i < 120; i++) {
    const kind = r.int(5);
    if (kind === 0) {
      // a hostile hello: an odd id, an odd key or an odd text
      const c = new FakeComputer(bridge.linkUrl, { computerId: 0 });
      sockets.push(c);
      const text = r.chance(0.5)
        ? r.pick(oddHelloTexts)
        : JSON.stringify({ type: 'hello', computerId: r.chance(0.5) ? r.pick(oddIds) : r.int(10), key: r.chance(0.5) ? r.pick(ODD_STRINGS) : r.pick(keys) + '\n' });
      ops.push(c.link(text));
    } else if (kind <= 2) {
      const id = r.int(10);
      const c = new FakeComputer(bridge.linkUrl, { computerId: id });
      sockets.push(c);
      ops.push(c.link({ type: 'hello', computerId: id, key: r.pick(keys) }).then(() => (r.chance(0.5) ? c.close() : null)));
    } else {
      const id = r.chance(0.9) ? r.int(10) : r.pick(['-1', '1.5', '1e3', '%2D1', '00000000000000001', '9007199254740992']);
      ops.push(request(bridge, `/pins/${id}/reset`, { headers: auth }));
    }
    if (r.chance(0.3)) await Promise.all(ops.splice(0));
  }
  await Promise.all(ops);
  for (const c of sockets) await c.close();
  const listed = await request(bridge, '/pins', { method: 'GET', headers: auth });
  assert.equal(listed.status, 200);
  const pinned = listed.body.pinned;
  assert.ok(pinned.length <= MAX, `at most CC_LINK_MAX_PINS pinned (seed ${seed}): ${pinned}`);
  assert.ok(pinned.every((id) => Number.isInteger(id) && id >= 0 && (id < 10 || id === 100)), `only ids a hello named pinned (0-9, 100 from 1E2; seed ${seed}): ${pinned}`);
  await bridge.close();
  const loaded = readPinsFile(file, MAX);
  assert.deepEqual([...loaded.pins.keys()], pinned, `the file holds the table (seed ${seed})`);
  const digests = new Set(keys.map(sha));
  for (const digest of loaded.pins.values()) assert.ok(digests.has(digest), 'every digest is one of a key that linked');
  assert.deepEqual(readdirSync(dir), ['pins'], 'no temporary file is left');
  const next = await startTestBridge(env);
  onClose(() => next.close());
  const again = await request(next, '/pins', { method: 'GET', headers: auth });
  assert.deepEqual(again.body.pinned, pinned, 'the next start reads the same table');
});
