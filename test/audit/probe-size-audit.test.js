// probe-computers shows each computer's pong (or error) whole, in its text and its structuredContent.
// mcp-computer's pong is `pong from <id> (Label: <label>)`; a computer that does not run it can answer
// a ping with a frame's worth (CC_MAX_FRAME_BYTES, 1 MiB), and a thousand such links make one probe's
// answer gigabytes. Real fake computers over WebSocket, the real tool over MCP.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { callTool, linkComputer, until, withBridge } from '../helpers.js';

test('bug: a pong or ping error of a frame\'s size (1 MiB) was taken whole into probe-computers\' answer, twice (text and structuredContent); now a pong over 2,048 characters is that computer\'s protocol error line and an error is cut there', { timeout: 60_000 }, () =>
  withBridge({}, async (bridge) => {
    const big = 'x'.repeat(500_000);
    const fine = await linkComputer(bridge, { computerId: 1, computerLabel: 'a' });
    const huge = await linkComputer(bridge, { computerId: 2, computerLabel: 'b', onRequest: () => ({ ok: true, result: big }) });
    const erring = await linkComputer(bridge, { computerId: 3, computerLabel: 'c', onRequest: () => ({ ok: false, error: big }) });
    const longest = await linkComputer(bridge, { computerId: 4, computerLabel: 'd', onRequest: () => ({ ok: true, result: 'p'.repeat(2048) }) });
    const probe = await callTool(bridge, 'probe-computers');
    const text = probe.content[0].text;
    assert.ok(text.length < 10_000, `the answer's text is ${text.length} characters`);
    assert.ok(JSON.stringify(probe.structuredContent).length < 10_000);
    const lines = text.split('\n');
    assert.equal(lines.length, 4, text);
    assert.ok(lines.includes('error from 2 (Label: b): protocol error: its pong is 500000 characters, more than 2048'), text);
    assert.ok(lines.includes(`error from 3 (Label: c): ${'x'.repeat(2048)}... (500000 characters)`), text);
    assert.ok(lines.includes('p'.repeat(2048)), 'a pong of 2,048 characters is shown');
    const byId = Object.fromEntries(probe.structuredContent.computers.map((c) => [c.computerId, c]));
    assert.equal(byId[1].status, 'pong');
    assert.equal(byId[2].status, 'error');
    assert.equal(byId[2].result, undefined);
    for (const c of [fine, huge, erring, longest]) await c.close();
    await until(() => bridge.links.size === 0);
  }));
