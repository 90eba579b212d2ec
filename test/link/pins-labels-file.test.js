// The label a pinned computer last said, kept in CC_LINK_PINS_FILE (`# label <id> <JSON string>`
// lines) so that a restart does not free it. The bug: the labels lived in memory only, so after a
// restart another computer linking as "base" was the only match for calls by that label until the
// pinned computer 5 came back, and was handed the code meant for it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeComputer, callTool, startTestBridge, until } from '../helpers.js';
import { PinsFileError, formatPins, parseLabels, readPinsFile } from '../../dist/link/pins-file.js';
import { KeyPins } from '../../dist/link/pins.js';
import { request, sha } from './pins-helpers.js';

const KEY = 'realKey_0123456789abcdefABCDEF-x';
const KEY6 = 'sixthKey_0123456789abcdefABCDEFG';
const T = { timeout: 60_000 };

/** A temp dir with a pins file path; bridges registered with `open` are closed before it is removed. */
function pinsDir(t) {
  const dir = mkdtempSync(join(tmpdir(), 'pins-labels-'));
  const bridges = [];
  t.after(async () => {
    for (const b of bridges) await b.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const file = join(dir, 'pins');
  const open = async (env = {}) => {
    const bridge = await startTestBridge({ CC_LINK_PINS_FILE: file, ...env });
    bridges.push(bridge);
    return bridge;
  };
  return { file, open };
}

/** A fake computer linked with `label` (and `key`, none when undefined) that answers exec-lua with `output`. */
async function labelled(bridge, computerId, key, label, output) {
  const c = new FakeComputer(bridge.linkUrl, { computerId, onRequest: () => ({ ok: true, result: { ok: true, output, returns: [] } }) });
  const first = await c.link({ type: 'hello', computerId, computerLabel: label, ...(key === undefined ? {} : { key }) });
  assert.equal(first.type, 'hello-ok', JSON.stringify(first));
  return c;
}

const byLabel = (bridge, label) => callTool(bridge, 'exec-lua', { computer: label, code: 'return 1' });

test('bug: after a restart another computer linking as "base" took the calls meant for pinned computer 5 (its label was in memory only); the pins file keeps it', T, async (t) => {
  const { file, open } = pinsDir(t);
  const first = await open();
  const real = await labelled(first, 5, KEY, 'base', 'real\n');
  await until(() => readFileSync(file, 'utf8').includes('# label 5 "base"\n'));
  await real.close();
  await first.close();

  const second = await open();
  assert.ok(second.logs.some((l) => /1 label of pinned computers kept from \S+pins/.test(l)), second.logs.join('\n'));
  const impostor = await labelled(second, 99, undefined, 'base', 'stolen\n');
  const refused = await byLabel(second, 'base');
  assert.equal(refused.isError, true, JSON.stringify(refused));
  assert.match(refused.content[0].text, /The label "base" is held by pinned computer 5, not linked now, and said by linked computer 99; use "computerId"/);
  assert.equal(impostor.received.some((f) => f.type === 'request' && f.method === 'exec-lua'), false, 'no code reached the impostor');
  await impostor.close();
  await until(() => second.links.size === 0);
  const none = await byLabel(second, 'base');
  assert.match(none.content[0].text, /No linked computer has the label "base": pinned computer 5, which had it, is not linked now/);
  // the real computer back: its label is its own
  const back = await labelled(second, 5, KEY, 'base', 'real again\n');
  assert.equal((await byLabel(second, 'base')).structuredContent.output, 'real again\n');
  await back.close();
});

test('pins file labels follow the computers: a rename (info frame) and a cleared label are written, a pin reset drops the line', T, async (t) => {
  const { file, open } = pinsDir(t);
  const bridge = await open();
  const five = await labelled(bridge, 5, KEY, 'base', 'five\n');
  const six = await labelled(bridge, 6, KEY6, 'say "hi"\n\u00e9', 'six\n');
  await until(() => readFileSync(file, 'utf8').includes('# label 6 "say \\"hi\\"\\n\u00e9"\n'));
  five.send({ type: 'info', computerLabel: 'base-2', peripherals: [] });
  await until(() => readFileSync(file, 'utf8').includes('# label 5 "base-2"\n'));
  assert.doesNotMatch(readFileSync(file, 'utf8'), /"base"/);
  six.send({ type: 'info', computerLabel: null, peripherals: [] });
  await until(() => !readFileSync(file, 'utf8').includes('# label 6 '));
  await five.close();
  // the operator's reset forgets the pin, and its label with it
  assert.equal((await request(bridge, '/pins/5/reset')).status, 200);
  await until(() => !readFileSync(file, 'utf8').includes('# label 5 '));
  assert.deepEqual([...readPinsFile(file, 10).labels], []);
  await six.close();
});

test('pins file labels: an old file without labels reads as before; a label for an id not pinned is left out (logged); a bad label line stops the start naming the line', T, async (t) => {
  const { file, open } = pinsDir(t);
  writeFileSync(file, `1 ${sha(KEY)}\n`, { mode: 0o600 });
  const old = readPinsFile(file, 10);
  assert.deepEqual([...old.pins.keys()], [1]);
  assert.deepEqual([...old.labels], []);
  writeFileSync(file, `1 ${sha(KEY)}\n# label 1 "base"\n# label 2 "gone"\n`, { mode: 0o600 });
  const bridge = await open();
  assert.ok(bridge.logs.some((l) => /1 label of pinned computers kept from \S+ \(1 for ids not pinned: left out\)/.test(l)), bridge.logs.join('\n'));
  assert.equal(bridge.pins.labelOf(1), 'base');
  assert.equal(bridge.pins.labelOf(2), null);
  await bridge.close();

  const bad = [
    ['# label 1 base', 2],
    ['# label 1 ""', 2],
    ['# label 1 "unclosed', 2],
    ['# label 1 "a" "b"', 2],
    ['# label x "a"', 2],
    ['# label', 2],
    [`# label 1 ${JSON.stringify('x'.repeat(1025))}`, 2],
    ['# label 1 "a"\n# label 1 "b"', 3],
  ];
  for (const [line, at] of bad) {
    writeFileSync(file, `1 ${sha(KEY)}\n${line}\n`, { mode: 0o600 });
    assert.throws(() => readPinsFile(file, 10), (err) => {
      assert.ok(err instanceof PinsFileError, String(err));
      assert.match(err.message, new RegExp(`^CC_LINK_PINS_FILE \\S+pins line ${at}: `));
      assert.match(err.message, at === 3 ? /computer id 1 is labelled twice/ : /expected "# label <computer id> <the label as a JSON string of 1 to 1024 characters>"/);
      return true;
    }, line);
  }
  assert.throws(() => parseLabels('# label 1 "a"\n# label 2 "b"\n', 'p', 1), /line 2: more than CC_LINK_MAX_PINS \(1\) labels/);
  // the longest label a hello may carry fits, and reads back; "# labels ..." is another comment
  const long = '\u0001'.repeat(1024);
  writeFileSync(file, formatPins([[1, sha(KEY)]], [], [], [], [[1, long]]) + '# labelled by hand\n', { mode: 0o600 });
  assert.deepEqual([...readPinsFile(file, 1).labels], [[1, long]]);
});

test('KeyPins: labels from the file are taken for pinned ids only; a reread replaces them; a label change asks for a write', () => {
  const pins = new KeyPins(10);
  let saves = 0;
  pins.onChange = () => {
    saves++;
  };
  pins.load([[1, sha(KEY)], [2, sha(KEY6)]]);
  assert.equal(pins.loadLabels([[1, 'a'], [3, 'c']]), 1);
  assert.deepEqual(pins.labelled(), [[1, 'a']]);
  assert.equal(saves, 0, 'loading writes nothing');
  pins.noteLabel(1, 'a');
  assert.equal(saves, 0);
  pins.noteLabel(2, 'b');
  pins.noteLabel(1, null);
  pins.noteLabel(4, 'not pinned');
  assert.equal(saves, 2);
  assert.deepEqual(pins.labelled(), [[2, 'b']]);
  pins.replace([[1, sha(KEY)], [2, sha(KEY6)]], [], [], [[1, 'from the file']]);
  assert.deepEqual(pins.labelled(), [[1, 'from the file'], [2, 'b']], 'a pinned id the file has no label for keeps its own');
  pins.replace([[1, sha(KEY)]], [], [], []);
  assert.deepEqual(pins.labelled(), [[1, 'from the file']]);
});

test('bug: a pinned computer changing its label back to back rewrote the whole pins file (synced) at each change; label changes alone are written at most once per CC_LINK_PIN_LABEL_WRITE_MS, the latest kept and written at shutdown', T, async (t) => {
  const { file, open } = pinsDir(t);
  const bridge = await open({ CC_LINK_PIN_LABEL_WRITE_MS: '3600000' });
  const metric = async (name) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(await (await fetch(bridge.mcpUrl.replace(/\/mcp$/, '/metrics'))).text())[1]);
  const five = await labelled(bridge, 5, KEY, 'base', 'five\n');
  // the first label change is written at once
  await until(() => readFileSync(file, 'utf8').includes('# label 5 "base"\n'));
  const before = await metric('cc_link_pins_file_writes_total');
  for (let i = 1; i <= 200; i++) {
    five.send({ type: 'info', computerLabel: `base-${i}`, peripherals: [] });
    // held in memory at once (a label lookup sees it) before the next change is sent
    await until(() => bridge.pins.labelOf(5) === `base-${i}`);
  }
  const written = (await metric('cc_link_pins_file_writes_total')) - before;
  // before: one write per change (about 200; fewer only when changes came during a write)
  assert.ok(written <= 2, `${written} writes of the pins file for 200 label changes`);
  assert.equal((await byLabel(bridge, 'base-200')).structuredContent.output, 'five\n');
  // a pin change is written at once as before (its hello-ok waits for it), and holds the latest labels
  const six = await labelled(bridge, 6, KEY6, 'six', 'six\n');
  const text = readFileSync(file, 'utf8');
  assert.match(text, new RegExp(`^6 ${sha(KEY6)}$`, 'm'));
  assert.match(text, /^# label 5 "base-200"$/m);
  for (let i = 201; i <= 250; i++) {
    five.send({ type: 'info', computerLabel: `base-${i}`, peripherals: [] });
    await until(() => bridge.pins.labelOf(5) === `base-${i}`);
  }
  assert.doesNotMatch(readFileSync(file, 'utf8'), /base-250/, 'set for later, not written yet');
  await five.close();
  await six.close();
  // the label-only write set for later is made at shutdown: nothing lost
  await bridge.close();
  assert.deepEqual([...readPinsFile(file, 10).labels], [[5, 'base-250'], [6, 'six']]);
});
