// Regression tests for the hostile-input defects of issue 7, each named after its defect, over a
// real bridge: real WebSocket computers and real HTTP.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { once } from 'node:events';
import { callTool, linkComputer, pongText, rpc, until, withBridge } from './helpers.js';

const deepArray = (levels) => '['.repeat(levels) + ']'.repeat(levels);

async function healthOk(bridge) {
  const res = await fetch(bridge.mcpUrl.replace(/\/mcp$/, '/health'));
  return res.status === 200;
}

test('defect 1: a link frame with a 5,000-deep type no longer stops the bridge', () =>
  withBridge({}, async (bridge) => {
    const good = await linkComputer(bridge, { computerId: 1 });
    const ws = new WebSocket(bridge.linkUrl);
    await once(ws, 'open');
    // before the fix this threw RangeError out of the ws message handler and the process exited
    ws.send('{"type":' + deepArray(5000) + '}');
    ws.send('{"type":"hello","computerId":' + deepArray(20000) + '}');
    ws.send(deepArray(100000));
    await until(() => bridge.logs.some((l) => /frame nests deeper than 64 levels; frame dropped/.test(l)));
    // the message never quotes the frame
    assert.ok(!bridge.logs.some((l) => l.includes('[[[[')));
    assert.ok(await healthOk(bridge));
    const result = await callTool(bridge, 'probe-computers');
    assert.equal(result.content[0].text, pongText(1, null));
    ws.terminate();
    await good.close();
  }));
