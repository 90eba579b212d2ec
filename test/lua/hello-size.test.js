// The hello against small frame limits (the computer's --max-frame, CC's websocket message limit,
// the bridge's CC_MAX_FRAME_BYTES): the computer leaves out the peripherals (and jobs) that do not
// fit and says so ("omitted"), which list-computers shows; a hello the bridge or CC still refuses
// stops the program with the fix instead of reconnecting forever.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { COLOURS, useComputer } from './computer.js';
import { startFakeBridge } from './fake-bridge.js';
import { describeLua } from './lua-env.js';
import { bridgeFor, callOk, textOf } from './mcp-helpers.js';

const T = { timeout: 60000 };
// 40 chests with long names: their hello is about 3.5 KB
const MANY = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`minecraft:chest_with_a_long_name_${String(i).padStart(2, '0')}`, 'chest']));
// backoff waits (1 s, 2 s) take 1 ms; the 5 s wait for hello-ok a minute (never reached on a loaded machine)
const timerMs = (s) => (s <= 2 ? 1 : 60000);
const FIX = "Run mcp-computer with a smaller --max-frame (at most the bridge's CC_MAX_FRAME_BYTES): the hello then leaves out the peripherals and jobs that do not fit.";

const smallBridge = (t) => bridgeFor(t, { CC_MAX_FRAME_BYTES: '1024' });

async function fakeBridge(t) {
  const bridge = await startFakeBridge();
  t.after(() => bridge.close());
  return bridge;
}

/** The program ended (exit 1) with `why` and the fix in red, and never tried again. */
async function stoppedWithFix(c, why) {
  const { code } = await c.waitForExit(50000);
  assert.equal(code, 1);
  const red = c.linesIn(COLOURS.red);
  assert.match(red[0], new RegExp(`^${why} this computer's hello is \\d+ bytes\\.$`));
  assert.equal(red.slice(1).join(' '), FIX);
  assert.doesNotMatch(c.output, /retrying|reconnecting/);
}

describeLua('the hello against small frame limits', () => {
  test('hello-too-large: the bridge closes a hello over its CC_MAX_FRAME_BYTES (1009); the computer stops with the fix, no reconnects', T, async (t) => {
    const bridge = await smallBridge(t);
    const c = useComputer(t, { id: 21, url: bridge.linkUrl, timerMs, peripherals: MANY });
    await stoppedWithFix(c, 'the bridge closed the link \\(1009: message too big\\):');
    assert.equal(bridge.links.size, 0);
  });

  test('hello-too-large: CC refuses to send a hello over its websocket message limit; the computer stops with the fix', T, async (t) => {
    const bridge = await fakeBridge(t);
    const c = useComputer(t, { id: 22, url: bridge.url, timerMs, peripherals: MANY, maxMessage: 2048 });
    await stoppedWithFix(c, 'CC refused to send it:');
    assert.equal(bridge.links.length, 1);
  });

  test('hello-fits-max-frame: --max-frame 1024 leaves out the peripherals that do not fit and says how many; list-computers shows it', T, async (t) => {
    const fake = await fakeBridge(t);
    const first = useComputer(t, { id: 23, url: fake.url, peripherals: MANY, args: ['--max-frame', '1024'] });
    await first.waitForOutput('linked as 23', 50000);
    const link = await fake.link(0);
    const hello = await link.hello;
    assert.ok(Buffer.byteLength(link.raw[0]) <= 1024, `hello of ${Buffer.byteLength(link.raw[0])} bytes`);
    assert.ok(hello.peripherals.length > 0 && hello.peripherals.length < 40, `${hello.peripherals.length} peripherals sent`);
    assert.deepEqual(hello.omitted, { peripherals: 40 - hello.peripherals.length, jobs: 0 });
    assert.deepEqual(hello.peripherals.map((p) => p.name), Object.keys(MANY).sort().slice(0, hello.peripherals.length));
    // an info frame after a change fits as well
    first.attachPeripheral('minecraft:chest_with_a_long_name_99', 'chest');
    const info = await link.waitFrame((f) => f.type === 'info', 50000);
    assert.ok(Buffer.byteLength(link.raw[link.frames.indexOf(info)]) <= 1024);
    assert.equal(info.omitted.peripherals, 41 - info.peripherals.length);

    const bridge = await smallBridge(t);
    const c = useComputer(t, { id: 24, url: bridge.linkUrl, peripherals: MANY, args: ['--max-frame', '1024'] });
    await c.waitForOutput('linked as 24', 50000);
    const listed = await callOk(bridge, 'list-computers');
    const [me] = listed.structuredContent.computers;
    assert.deepEqual(me.omitted, { peripherals: 40 - me.peripherals.length, jobs: 0 });
    assert.match(textOf(listed), new RegExp(`\\(left out to fit its frame limit: ${40 - me.peripherals.length} peripherals\\); connected `));
  });

  test('a hello that fits says nothing was left out', T, async (t) => {
    const fake = await fakeBridge(t);
    const c = useComputer(t, { id: 25, url: fake.url, peripherals: MANY });
    await c.waitForOutput('linked as 25', 50000);
    const hello = await (await fake.link(0)).hello;
    assert.equal(hello.peripherals.length, 40);
    assert.equal(hello.omitted, undefined);
  });
});
