// The hello against small frame limits on a real ComputerCraft runtime (CraftOS-PC, periphemu
// peripherals, real websockets). CraftOS-PC's peripheral.getNames() lists only the six sides, so the
// hello grows here by its job list: after a bridge restart it lists the computer's 16 jobs. A hello
// over the new bridge's CC_MAX_FRAME_BYTES stops the program with the fix; with --max-frame 1024 the
// hello leaves out what does not fit and says so. After hello-ok, which carries the bridge's limit, the
// computer fits its answers to it instead of being closed with 1009. Skipped with one line when
// CraftOS-PC is not here.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startBridge } from '../../dist/bridge.js';
import { bridgeConfig, CraftosComputer, describeCraftos, READY, runLine, useLinkedCraftos } from './craftos.js';
import { startFakeBridge } from './fake-bridge.js';
import { callOk } from './mcp-helpers.js';
import { until } from '../helpers.js';

const T = { timeout: 120000 };
const SIDES = 'for _, side in ipairs({ "top", "bottom", "left", "right", "front", "back" }) do periphemu.create(side, "chest") end\n';


/** A computer linked to a bridge that ran 16 detached jobs on it, then was restarted on the same port with `env`. */
async function withJobs(t, id, flags, env) {
  let bridge = await startBridge(bridgeConfig());
  t.after(() => bridge.close(100));
  const pc = new CraftosComputer({ id, startup: `${SIDES}${runLine(bridge.linkUrl, flags)}print("program-" .. "ended")\nos.shutdown()\n` });
  t.after(() => pc.cleanup());
  await pc.waitForOutput(READY, 60000);
  for (let i = 0; i < 16; i++) {
    await callOk(bridge, 'exec-lua', { computerId: id, code: `return "a job with a long line of code to describe it, number ${i}"`, detach: true });
  }
  const mark = pc.output.length;
  const port = new URL(bridge.linkUrl).port;
  await bridge.close(100);
  bridge = await startBridge(bridgeConfig({ CC_LINK_PORT: port, ...env }));
  return { bridge: () => bridge, pc, mark };
}

describeCraftos('CraftOS-PC: the hello against small frame limits', () => {
  test('hello-too-large on CraftOS-PC: a hello over CC_MAX_FRAME_BYTES stops the program with the fix, no reconnect loop', T, async (t) => {
    const { bridge, pc, mark } = await withJobs(t, 41, [], { CC_MAX_FRAME_BYTES: '1024' });
    await pc.waitForOutput('program-ended', 60000, mark);
    const lines = pc.lines().join(' '); // rows wrap at 51 columns
    assert.match(lines, /the bridge closed the link \(1009: message too big\): this computer's hello is \d+ bytes\./);
    assert.match(lines, /Run mcp-computer with a smaller --max-frame/);
    assert.equal(bridge().links.size, 0);
  });

  test('hello-fits-max-frame on CraftOS-PC: with --max-frame 1024 the relinked hello leaves out the jobs that do not fit and says how many', T, async (t) => {
    const { bridge } = await withJobs(t, 42, ['--max-frame', '1024'], { CC_MAX_FRAME_BYTES: '1024' });
    await until(() => bridge().links.get(42), 20, 60000);
    const [me] = (await callOk(bridge(), 'list-computers')).structuredContent.computers;
    assert.equal(me.peripherals.length + me.omitted.peripherals, 6);
    assert.ok(me.jobs.length < 16, `${me.jobs.length} jobs listed`);
    assert.equal(me.jobs.length + me.omitted.jobs, 16);
    assert.equal((await callOk(bridge(), 'probe-computers')).content[0].text, 'pong from 42 (Label: null)');
  });
});

describeCraftos("CraftOS-PC: the bridge's frame limit from hello-ok", () => {
  const LIMIT = 8192;
  const content = Array.from({ length: 600 }, (_, i) => `row ${String(i).padStart(4, '0')} of the big file\n`).join('');
  const ctx = useLinkedCraftos({ id: 43, env: { CC_MAX_FRAME_BYTES: String(LIMIT) }, files: { 'big.txt': content } });

  test(`exec-lua output and read-file over CC_MAX_FRAME_BYTES (${LIMIT}) are cut or split to fit; the link stays up`, T, async () => {
    const link = ctx.bridge.links.get(43);
    const result = await callOk(ctx.bridge, 'exec-lua', { computerId: 43, code: 'local t = {} for i = 1, 400 do t[i] = ("line %03d "):format(i) .. ("x"):rep(60) end return table.concat(t, "\\n")' });
    assert.equal(result.structuredContent.truncated, true);
    const [ret] = result.structuredContent.returns;
    assert.ok(ret.value.length > LIMIT / 2 && ret.value.length < LIMIT, `${ret.value.length} bytes returned`);
    assert.ok(ret.value.startsWith('line 001 '));
    const read = await callOk(ctx.bridge, 'read-file', { computerId: 43, path: 'big.txt', encoding: 'text' });
    assert.equal(read.structuredContent.content, content);
    assert.equal(ctx.bridge.links.get(43), link, 'the same link');
    assert.equal(ctx.bridge.metrics.linksLinked, 1, 'never relinked');
  });
});

describeCraftos('CraftOS-PC: a deeply nested frame during the hello wait', () => {
  test('bug: a frame of 120,000 nested arrays (CC parses it) overflowed the stack in the walk after decoding and the program crashed', T, async (t) => {
    const DEPTH = 120000; // CC's own decoder overflows near 130,000 here
    const deep = `{"type":"hello-ok","a":${'['.repeat(DEPTH)}"\\ud83d\\ude00"${']'.repeat(DEPTH)}}`;
    const bridge = await startFakeBridge({ hello: (l) => { l.send(deep); l.send({ type: 'hello-ok' }); } });
    t.after(() => bridge.close());
    const pc = new CraftosComputer({ id: 44, config: { http_max_websocket_message: 1 << 20 }, startup: `${runLine(bridge.url)}print("program-" .. "ended")\n` });
    t.after(() => pc.cleanup());
    await pc.waitForOutput(READY, 60000);
    const lines = pc.lines().join(' ');
    assert.match(lines, /ignored a malformed frame/);
    assert.doesNotMatch(lines, /program-ended/);
    const link = await bridge.link(0);
    const pong = await link.request('ping');
    assert.equal(pong.ok, true, JSON.stringify(pong));
  });
});
