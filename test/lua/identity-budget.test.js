// The bridge's identity budget (CC_MAX_IDENTITY_BYTES) told in hello-ok as maxIdentity: mcp-computer fits
// its info frames and a relink's hello to the smaller of it and its frame limit, so the bridge never has to
// cut them. A hello-ok without it (an older bridge) leaves the frame limit in charge; a malformed one is
// ignored with one warning.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { COLOURS, useComputer } from './computer.js';
import { startFakeBridge } from './fake-bridge.js';
import { describeLua } from './lua-env.js';
import { until } from '../helpers.js';
import { bridgeFor, callOk, linkedComputer, textOf } from './mcp-helpers.js';

const T = { timeout: 60000 };
const BUDGET = 4096;
// backoff waits (1 s, 2 s) take 1 ms; the 5 s wait for hello-ok a minute (never reached on a loaded machine)
const timerMs = (s) => (s <= 2 ? 1 : 60000);
const chest = (i) => `minecraft:chest_with_a_long_name_${String(i).padStart(2, '0')}`;
// 40 chests with long names: their hello is about 3.5 KB
const MANY = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [chest(i), 'chest']));
const bytes = (text) => Buffer.byteLength(text);

async function fakeBridge(t, hello) {
  const bridge = await startFakeBridge({ hello });
  t.after(() => bridge.close());
  return bridge;
}

describeLua('the bridge identity budget in hello-ok', () => {
  test(`bug: info frames fit the bridge's CC_MAX_IDENTITY_BYTES (${BUDGET}), so the bridge keeps the computer's own cut and never cuts or warns`, T, async (t) => {
    const bridge = await bridgeFor(t, { CC_MAX_IDENTITY_BYTES: String(BUDGET) });
    const c = await linkedComputer(t, bridge, { id: 41 });
    const link = bridge.links.get(41);
    // about 7 KB of peripherals: over the budget, far under the frame limits (128 KiB, 1 MiB)
    for (let i = 0; i < 80; i++) c.attachPeripheral(chest(i), 'chest');
    await until(() => {
      assert.equal(bridge.links.get(41), link, 'the link is still up');
      return link.identity.omitted !== undefined && link.identity.peripherals.length + link.identity.omitted.peripherals === 80;
    }, 20, 50000);
    const infos = c.sent.filter((f) => f.startsWith('{') && JSON.parse(f).type === 'info');
    assert.ok(infos.length > 0);
    for (const frame of infos) assert.ok(bytes(frame) <= BUDGET, `an info frame of ${bytes(frame)} bytes`);
    assert.equal(link.identity.omitted.budget, undefined, 'the computer left them out, not the bridge');
    const listed = await callOk(bridge, 'list-computers');
    const [me] = listed.structuredContent.computers;
    assert.ok(me.peripherals.length > 10 && me.peripherals.length < 80, `${me.peripherals.length} peripherals listed`);
    assert.deepEqual(me.omitted, { peripherals: 80 - me.peripherals.length, jobs: 0 });
    assert.match(textOf(listed), new RegExp(`\\(left out to fit its frame limit: ${80 - me.peripherals.length} peripherals\\); connected `));
    assert.equal(bridge.links.get(41), link);
  });

  test("relinking: the hello fits the bridge's last identity budget; a later hello-ok without one (older bridge) brings the whole lists back", T, async (t) => {
    let n = 0;
    const fake = await fakeBridge(t, (link) => {
      if (n++ === 0) {
        link.send({ type: 'hello-ok', maxFrame: 1 << 20, maxIdentity: 1024 });
        setTimeout(() => link.close(1011, 'restarting'), 50);
      } else {
        link.send({ type: 'hello-ok', maxFrame: 1 << 20 });
      }
    });
    const c = useComputer(t, { id: 42, url: fake.url, peripherals: MANY, timerMs });
    const first = await (await fake.link(0)).hello;
    assert.equal(first.peripherals.length, 40, 'the first hello knows no budget: it fits --max-frame');
    const second = await fake.link(1, 50000);
    const hello = await second.hello;
    assert.ok(bytes(second.raw[0]) <= 1024, `relinked hello of ${bytes(second.raw[0])} bytes`);
    assert.equal(hello.maxFrame, 131072, 'the hello still says its own --max-frame');
    assert.deepEqual(hello.omitted, { peripherals: 40 - hello.peripherals.length, jobs: 0 });
    // the older bridge said no budget: the next info frame has every peripheral, nothing omitted
    const info = await second.waitFrame((f) => f.type === 'info', 50000);
    assert.equal(info.peripherals.length, 40);
    assert.equal(info.omitted, undefined);
    // answers are not bound by the identity budget: only hello and info frames are
    const answer = await second.exec('for i = 1, 40 do print(("q"):rep(100)) end', 50000);
    assert.equal(answer.result.truncated, false);
    assert.match(c.output, /linked as 42[\s\S]*linked as 42/);
    assert.deepEqual(c.linesIn(COLOURS.yellow), []);
  });

  test('an exec-lua answer is not bound by the identity budget, only hello and info frames are', T, async (t) => {
    const fake = await fakeBridge(t, (link) => link.send({ type: 'hello-ok', maxFrame: 1 << 20, maxIdentity: 1024 }));
    const c = useComputer(t, { id: 43, url: fake.url, peripherals: MANY });
    await c.waitForOutput('waiting for requests', 50000);
    const link = await fake.link(0);
    const answer = await link.exec('for i = 1, 40 do print(("q"):rep(100)) end', 50000);
    assert.equal(answer.result.truncated, false);
    assert.ok(bytes(link.raw[link.frames.indexOf(answer)]) > 4000);
  });

  for (const [what, bad] of [
    ['a string', 'big'],
    ['below 1024', 512],
    ['a fraction', 4096.5],
  ]) {
    test(`a malformed hello-ok maxIdentity (${what}) is ignored with one warning, also across relinks`, T, async (t) => {
      let n = 0;
      const fake = await fakeBridge(t, (link) => {
        link.send({ type: 'hello-ok', maxFrame: 1 << 20, maxIdentity: bad });
        if (n++ === 0) setTimeout(() => link.close(1011, 'restarting'), 50);
      });
      const c = useComputer(t, { id: 44, url: fake.url, peripherals: MANY, timerMs });
      const link = await fake.link(1, 50000);
      const hello = await link.hello;
      assert.equal(hello.peripherals.length, 40, 'fitted to --max-frame, not to the bad value');
      await c.waitForOutput(/linked as 44[\s\S]*linked as 44[\s\S]*waiting for requests/, 50000);
      assert.deepEqual(c.linesIn(COLOURS.yellow), ["warning: ignored the bridge's identity budget (hello-ok maxIdentity is not a whole number >= 1024)"]);
    });
  }
});
