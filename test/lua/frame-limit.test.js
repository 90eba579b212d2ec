// The bridge's frame limit (CC_MAX_FRAME_BYTES) told to the computer in hello-ok: mcp-computer sizes
// every frame it sends to the smaller of its --max-frame and the bridge's limit, so a large answer is
// cut (or sent in smaller pieces) instead of the bridge closing the link with 1009. A hello-ok without
// the field (an older bridge) leaves --max-frame in charge; a malformed one is ignored with one warning.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { COLOURS, useComputer } from './computer.js';
import { startFakeBridge } from './fake-bridge.js';
import { describeLua } from './lua-env.js';
import { until } from '../helpers.js';
import { bridgeFor, callOk, linkedComputer, textOf } from './mcp-helpers.js';

const T = { timeout: 60000 };
const LIMIT = 8192;
// backoff waits (1 s, 2 s) take 1 ms; the 5 s wait for hello-ok a minute (never reached on a loaded machine)
const timerMs = (s) => (s <= 2 ? 1 : 60000);
// 40 chests with long names: their hello is about 3.5 KB
const MANY = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`minecraft:chest_with_a_long_name_${String(i).padStart(2, '0')}`, 'chest']));
const bytes = (text) => Buffer.byteLength(text);

async function fakeBridge(t, hello) {
  const bridge = await startFakeBridge({ hello });
  t.after(() => bridge.close());
  return bridge;
}

/** The computer is still on its first link: never closed, never reconnected. */
function stillLinked(c, bridge, id, link) {
  assert.equal(bridge.links.get(id), link, 'the same link');
  assert.doesNotMatch(c.output, /link closed|retrying|reconnecting/);
  assert.equal(bridge.metrics.linksLinked, 1);
}

describeLua('the bridge frame limit in hello-ok', () => {
  test(`exec-lua output over the bridge's CC_MAX_FRAME_BYTES (${LIMIT}) is cut to fit; the link stays up`, T, async (t) => {
    const bridge = await bridgeFor(t, { CC_MAX_FRAME_BYTES: String(LIMIT) });
    const c = await linkedComputer(t, bridge, { id: 31 });
    const link = bridge.links.get(31);
    const result = await callOk(bridge, 'exec-lua', { computerId: 31, code: 'for i = 1, 400 do print(("line %03d "):format(i) .. ("x"):rep(60)) end return "done"' });
    assert.equal(result.structuredContent.truncated, true);
    assert.match(result.structuredContent.output, /^line 001 x{60}\nline 002 /);
    assert.ok(result.structuredContent.output.length < LIMIT && result.structuredContent.output.length > LIMIT / 2, `${result.structuredContent.output.length} bytes of output`);
    assert.deepEqual(result.structuredContent.returns, [{ type: 'string', value: 'done' }]);
    for (const frame of c.sent) assert.ok(bytes(frame) <= LIMIT, `a frame of ${bytes(frame)} bytes`);
    stillLinked(c, bridge, 31, link);
    assert.match(textOf(await callOk(bridge, 'probe-computers')), /pong from 31/);
  });

  test(`read-file of a file larger than CC_MAX_FRAME_BYTES comes in pieces under it; the link stays up`, T, async (t) => {
    const bridge = await bridgeFor(t, { CC_MAX_FRAME_BYTES: String(LIMIT) });
    const content = Array.from({ length: 600 }, (_, i) => `row ${String(i).padStart(4, '0')} of the big file\n`).join('');
    const c = await linkedComputer(t, bridge, { id: 32, files: { 'big.txt': content } });
    const link = bridge.links.get(32);
    const read = await callOk(bridge, 'read-file', { computerId: 32, path: 'big.txt', encoding: 'text' });
    assert.equal(read.structuredContent.content, content);
    const pieces = c.sent.filter((f) => f.includes('"data"'));
    assert.ok(pieces.length >= 3, `${pieces.length} pieces`);
    for (const frame of c.sent) assert.ok(bytes(frame) <= LIMIT, `a frame of ${bytes(frame)} bytes`);
    stillLinked(c, bridge, 32, link);
  });

  test('info frames fit the bridge limit: 80 peripherals attached after the hello are listed as far as they fit, the rest said left out', T, async (t) => {
    const bridge = await bridgeFor(t, { CC_MAX_FRAME_BYTES: '4096' });
    const c = await linkedComputer(t, bridge, { id: 37 });
    const link = bridge.links.get(37);
    // about 7 KB of peripherals: over the bridge's 4096, far under --max-frame
    for (let i = 0; i < 80; i++) c.attachPeripheral(`minecraft:chest_with_a_long_name_${String(i).padStart(2, '0')}`, 'chest');
    await until(() => {
      assert.equal(bridge.links.get(37), link, 'the link is still up');
      return link.identity.omitted !== undefined && link.identity.peripherals.length + link.identity.omitted.peripherals === 80;
    }, 20, 50000);
    for (const frame of c.sent) assert.ok(bytes(frame) <= 4096, `a frame of ${bytes(frame)} bytes`);
    const listed = await callOk(bridge, 'list-computers');
    const [me] = listed.structuredContent.computers;
    assert.ok(me.peripherals.length > 10 && me.peripherals.length < 80, `${me.peripherals.length} peripherals listed`);
    assert.deepEqual(me.omitted, { peripherals: 80 - me.peripherals.length, jobs: 0 });
    assert.match(textOf(listed), new RegExp(`\\(left out to fit its frame limit: ${80 - me.peripherals.length} peripherals\\); connected `));
    stillLinked(c, bridge, 37, link);
  });

  test('a hello-ok with a limit above --max-frame changes nothing: --max-frame stays in charge', T, async (t) => {
    const fake = await fakeBridge(t, (link) => link.send({ type: 'hello-ok', maxFrame: 1 << 20 }));
    const c = useComputer(t, { id: 33, url: fake.url, args: ['--max-frame', '4096'] });
    await c.waitForOutput('waiting for requests', 50000);
    const link = await fake.link(0);
    const answer = await link.exec('for i = 1, 200 do print(("y"):rep(100)) end', 50000);
    assert.equal(answer.result.truncated, true);
    const raw = link.raw[link.frames.indexOf(answer)];
    assert.ok(bytes(raw) <= 4096 && bytes(raw) > 2048, `a frame of ${bytes(raw)} bytes`);
  });

  test('hello-ok maxFrame 2048 from a bridge: exec-lua answers and list-files pieces fit it', T, async (t) => {
    const fake = await fakeBridge(t, (link) => link.send({ type: 'hello-ok', maxFrame: 2048 }));
    const files = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`dir/file-with-a-longish-name-${i}.txt`, 'x']));
    const c = useComputer(t, { id: 34, url: fake.url, files });
    await c.waitForOutput('waiting for requests', 50000);
    const link = await fake.link(0);
    const answer = await link.exec('for i = 1, 200 do print(("z"):rep(100)) end return ("r"):rep(5000)', 50000);
    assert.equal(answer.result.truncated, true);
    assert.ok(bytes(link.raw[link.frames.indexOf(answer)]) <= 2048);
    const listed = await link.request('list-files', { path: 'dir' }, 50000);
    assert.equal(listed.ok, true);
    assert.ok(listed.result.next > 0 && listed.result.entries.length < 60, `${listed.result.entries.length} entries in the first piece`);
    assert.ok(bytes(link.raw[link.frames.indexOf(listed)]) <= 2048);
    assert.deepEqual(c.linesIn(COLOURS.yellow), []);
  });

  test("relinking: the hello fits the bridge's last limit; a later hello-ok without one (older bridge) brings the whole lists back", T, async (t) => {
    let n = 0;
    const fake = await fakeBridge(t, (link) => {
      if (n++ === 0) {
        link.send({ type: 'hello-ok', maxFrame: 1024 });
        setTimeout(() => link.close(1011, 'restarting'), 50);
      } else {
        link.send({ type: 'hello-ok' });
      }
    });
    const c = useComputer(t, { id: 35, url: fake.url, peripherals: MANY, timerMs });
    const first = await (await fake.link(0)).hello;
    assert.equal(first.peripherals.length, 40, 'the first hello knows no bridge limit: it fits --max-frame');
    const second = await fake.link(1, 50000);
    const hello = await second.hello;
    assert.ok(bytes(second.raw[0]) <= 1024, `relinked hello of ${bytes(second.raw[0])} bytes`);
    assert.equal(hello.maxFrame, 131072, 'the hello still says its own --max-frame');
    assert.deepEqual(hello.omitted, { peripherals: 40 - hello.peripherals.length, jobs: 0 });
    // the older bridge said no limit: the next info frame has every peripheral, nothing omitted
    const info = await second.waitFrame((f) => f.type === 'info', 50000);
    assert.equal(info.peripherals.length, 40);
    assert.equal(info.omitted, undefined);
    assert.match(c.output, /linked as 35[\s\S]*linked as 35/);
  });

  for (const [what, bad] of [
    ['a string', 'big'],
    ['below 1024', 512],
    ['a fraction', 4096.5],
    ['a table', { bytes: 4096 }],
  ]) {
    test(`a malformed hello-ok maxFrame (${what}) is ignored with one warning, also across relinks`, T, async (t) => {
      let n = 0;
      const fake = await fakeBridge(t, (link) => {
        link.send({ type: 'hello-ok', maxFrame: bad });
        if (n++ === 0) setTimeout(() => link.close(1011, 'restarting'), 50);
      });
      const c = useComputer(t, { id: 36, url: fake.url, timerMs });
      const link = await fake.link(1, 50000);
      await link.hello;
      await c.waitForOutput(/linked as 36[\s\S]*linked as 36[\s\S]*waiting for requests/, 50000);
      const answer = await link.exec('for i = 1, 200 do print(("w"):rep(100)) end', 50000);
      assert.equal(answer.result.truncated, false, 'sized to --max-frame (131072), not to the bad value');
      assert.equal(answer.result.output, `${'w'.repeat(100)}\n`.repeat(200));
      assert.deepEqual(c.linesIn(COLOURS.yellow), ["warning: ignored the bridge's frame limit (hello-ok maxFrame is not a whole number >= 1024)"]);
    });
  }
});
