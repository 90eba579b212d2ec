// Adversarial tests of the pins (CC_LINK_PINS_FILE, CC_LINK_PIN=strict, GET /pins, POST /pins/<id>/reset)
// from what a computer on the link port and a caller on the MCP port can send.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeComputer, startTestBridge, until } from '../helpers.js';
import { readPinsFile } from '../../dist/link/pins-file.js';

const KEY = 'realKey_0123456789abcdefABCDEF-x';
const OTHER = 'impostorKey_0123456789abcdefABCD';
const TOKEN = 'operator-token-0123456789abcdef';
const sha = (key) => createHash('sha256').update(key).digest('hex');

async function attempt(bridge, computerId, key) {
  const c = new FakeComputer(bridge.linkUrl, { computerId });
  const first = await c.link({ type: 'hello', computerId, ...(key === undefined ? {} : { key }) });
  return { c, first };
}

const base = (bridge) => bridge.mcpUrl.replace(/\/mcp$/, '');

async function request(bridge, path, { method = 'POST', headers = {}, body } = {}) {
  const res = await fetch(base(bridge) + path, { method, headers, body });
  const text = await res.text();
  return { status: res.status, body: text === '' ? null : JSON.parse(text) };
}

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
    return !text.includes(`${big} `) && text;
  });
  assert.match(lines, new RegExp(`^3 ${sha(KEY)}$`, 'm'));
});
