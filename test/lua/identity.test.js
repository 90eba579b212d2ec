// Identity end to end: the hello's fields reach list-computers; a peripheral attached or detached
// and a label change reach the bridge as an info frame on the same link (no new hello).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeLua } from './lua-env.js';
import { until } from '../helpers.js';
import { bridgeFor, callOk, linkedComputer, textOf } from './mcp-helpers.js';

const T = { timeout: 60000 };

describeLua('identity', () => {
  test('list-computers: kind, advanced, _HOST, CC version, program version, label, peripherals, times', T, async (t) => {
    const bridge = await bridgeFor(t, { CC_EXEC_LUA: 'off' });
    await linkedComputer(t, bridge, { id: 4, label: 'base', peripherals: { left: 'modem', right: 'chest' } });
    await linkedComputer(t, bridge, { id: 2, colour: false });
    const result = await callOk(bridge, 'list-computers');
    const [two, four] = result.structuredContent.computers;
    assert.deepEqual({ ...four, connectedAt: 'x', lastSeenAt: 'y' }, {
      computerId: 4,
      label: 'base',
      kind: 'computer',
      advanced: true,
      host: 'ComputerCraft 1.109.0 (cc-emu)',
      ccVersion: '1.109.0',
      version: '0.1.0',
      peripherals: [
        { name: 'left', types: ['modem'] },
        { name: 'right', types: ['minecraft:chest', 'inventory'] },
      ],
      jobs: [],
      connectedAt: 'x',
      lastSeenAt: 'y',
      pinned: true,
    });
    assert.equal(new Date(four.connectedAt).toISOString(), four.connectedAt);
    assert.ok(Date.parse(four.lastSeenAt) >= Date.parse(four.connectedAt));
    assert.equal(two.advanced, false);
    assert.deepEqual(two.peripherals, []);
    const lines = textOf(result).split('\n');
    assert.equal(lines.length, 2);
    assert.match(lines[0], /^2 \(Label: null\): basic computer, CC 1\.109\.0, _HOST "ComputerCraft 1\.109\.0 \(cc-emu\)", mcp-computer 0\.1\.0; no peripherals; connected \S+, last seen \S+; id pinned to its key$/);
    assert.match(lines[1], /^4 \(Label: base\): advanced computer, .*; peripherals: left \(modem\), right \(minecraft:chest, inventory\); connected /);
  });

  test('attach, detach and a new label reach the bridge on the same link', T, async (t) => {
    const bridge = await bridgeFor(t);
    const c = await linkedComputer(t, bridge, { id: 6, label: 'old' });
    const link = bridge.links.get(6);
    c.attachPeripheral('top', 'monitor');
    await until(() => bridge.links.get(6).identity.peripherals.length === 1);
    assert.deepEqual(bridge.links.get(6).identity.peripherals, [{ name: 'top', types: ['monitor'] }]);
    c.attachPeripheral('back', 'barrel');
    c.detachPeripheral('top');
    await until(() => bridge.links.get(6).identity.peripherals.map((p) => p.name).join() === 'back');
    await callOk(bridge, 'exec-lua', { computerId: 6, code: 'os.setComputerLabel("new")' });
    await until(() => bridge.links.get(6).label === 'new');
    assert.equal(bridge.links.get(6), link, 'the same link: no new hello');
    const listed = await callOk(bridge, 'list-computers');
    assert.equal(listed.structuredContent.computers[0].label, 'new');
    assert.equal((await callOk(bridge, 'probe-computers')).content[0].text, 'pong from 6 (Label: new)');
    await callOk(bridge, 'list-files', { computer: 'new' });
    await callOk(bridge, 'exec-lua', { computerId: 6, code: 'os.setComputerLabel(nil)' });
    await until(() => bridge.links.get(6).label === null);
  });
});

describeLua('identity: a label set by a chunk', () => {
  test('bug: a label set by exec-lua reached the bridge only with the next identity check (up to 2 s later), so a list-computers right after the call showed the old label; it now comes before the answer', T, async (t) => {
    const bridge = await bridgeFor(t);
    // the 2 s identity check never comes in this test: only the answer's own info frame can tell the bridge
    const c = await linkedComputer(t, bridge, {
      id: 6, label: 'old', files: { relabel: 'os.setComputerLabel(...)' }, timerMs: (seconds) => (seconds === 2 ? 3_600_000 : seconds * 10),
    });
    const listed = async () => (await callOk(bridge, 'list-computers')).structuredContent.computers[0].label;
    for (const label of ['new', 'newer', 'base-1']) {
      await callOk(bridge, 'exec-lua', { computerId: 6, code: `os.setComputerLabel("${label}")` });
      assert.equal(await listed(), label);
    }
    await callOk(bridge, 'exec-lua', { computerId: 6, code: 'os.setComputerLabel(nil)' });
    assert.equal(await listed(), null);
    // a program run by run-program sets it too
    assert.equal((await callOk(bridge, 'run-program', { computerId: 6, command: 'relabel miner' })).structuredContent.success, true);
    assert.equal(await listed(), 'miner');
    assert.equal((await callOk(bridge, 'probe-computers')).content[0].text, 'pong from 6 (Label: miner)');
    // the new label names the computer in the call right after
    await callOk(bridge, 'list-files', { computer: 'miner' });
    assert.ok(c.timersStarted.some(([, s]) => s === 2), 'the identity check timer was started (and held back)');
  });
});
