// CC_LINK_MAX_UNSENT_BYTES: a computer that stops reading its socket is dropped instead of having every
// request to it buffered in the bridge. Real WebSocket clients, MCP over real HTTP.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import WebSocket from 'ws';
import { linkComputer, pongText, rpc, until, withBridge } from '../helpers.js';

/** Links computer `computerId`, then stops reading its socket; it sends a pong of its own every 100 ms. */
async function deafComputer(linkUrl, computerId) {
  const ws = new WebSocket(linkUrl);
  await once(ws, 'open');
  ws.send(JSON.stringify({ type: 'hello', computerId, computerLabel: 'deaf' }));
  const [first] = await once(ws, 'message');
  assert.equal(JSON.parse(first.toString()).type, 'hello-ok');
  // TCP keeps what the bridge writes from now on in the kernel's buffers, then in the bridge
  ws._socket.pause();
  // unsolicited pongs (RFC 6455 5.5.3) keep the heartbeat's alive flag set without reading anything
  const pongs = setInterval(() => ws.readyState === WebSocket.OPEN && ws.pong(), 100);
  const closed = once(ws, 'close').then(() => clearInterval(pongs));
  return { ws, closed, stop: () => { clearInterval(pongs); ws.terminate(); } };
}

const execBody = (computerId, code, timeoutMs = 50) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'exec-lua', arguments: { computerId, code, timeoutMs } } });

test('bug: a computer that stopped reading its socket (and kept its link up with pongs of its own) had every request to it buffered in the bridge without bound', { timeout: 80_000 }, () =>
  withBridge({ CC_LINK_MAX_UNSENT_BYTES: String(1 << 20), LOG_LEVEL: 'info' }, async (bridge) => {
    const deaf = await deafComputer(bridge.linkUrl, 7);
    const good = await linkComputer(bridge, { computerId: 8, computerLabel: 'good' });
    try {
      // 60 KB of code a call: the kernel's socket buffers take a few MB, then the bridge keeps the rest
      const code = `return 1 --${'a'.repeat(60_000)}`;
      const texts = [];
      let dropped = null;
      // at most 3,000 calls (180 MB): the build before kept every byte of them for the deaf computer
      let sent = 0;
      const caller = async () => {
        while (dropped === null && sent < 3000) {
          sent++;
          const { json } = await rpc(bridge.mcpUrl, execBody(7, code));
          const text = json.result.content[0].text;
          texts.push(text);
          if (/dropped before it answered|No linked computer has id 7/.test(text)) dropped ??= text;
        }
      };
      await Promise.all(Array.from({ length: 16 }, caller));
      assert.ok(dropped !== null, `the deaf computer was never dropped after ${sent} calls (${texts.length} answers, last: ${texts.at(-1)})`);
      // the call that met the limit (or a later one) says why; the log says it too
      const why = texts.find((t) => t.includes('CC_LINK_MAX_UNSENT_BYTES'));
      assert.match(why ?? '', /the link to computer 7 \(Label: deaf\) dropped before it answered \(the computer did not read what was sent to it: \d+ bytes wait unread \(over CC_LINK_MAX_UNSENT_BYTES=1048576\)\)/);
      assert.ok(sent < 1000, `dropped only after ${sent} calls`);
      await until(() => bridge.logs.some((l) => /computer 7 \(Label: deaf\) has not read \d+ bytes sent to it \(over CC_LINK_MAX_UNSENT_BYTES=1048576\); dropped/.test(l)));
      await deaf.closed;
      const metrics = await (await fetch(bridge.mcpUrl.replace(/\/mcp$/, '/metrics'))).text();
      assert.match(metrics, /^cc_link_unread_dropped_total 1$/m);
      // the computer that reads is untouched
      const probe = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'probe-computers', arguments: {} } });
      assert.ok(probe.json.result.content[0].text.includes(pongText(8, 'good')), probe.text);
    } finally {
      deaf.stop();
      await good.close();
    }
  }));

test('CC_LINK_MAX_UNSENT_BYTES: a computer that reads what it is sent is never dropped, however much it is sent', { timeout: 60_000 }, () =>
  withBridge({ CC_LINK_MAX_UNSENT_BYTES: String(1 << 20), LOG_LEVEL: 'info' }, async (bridge) => {
    const computer = await linkComputer(bridge, { computerId: 9, onRequest: (frame) => ({ ok: true, result: { output: '', returns: [{ type: 'number', value: frame.params.code.length }] } }) });
    try {
      const code = `return 1 --${'b'.repeat(60_000)}`;
      // one after another, 4 MB in all: four times the limit, each taken by a computer that reads
      for (let i = 0; i < 70; i++) {
        const { json, text } = await rpc(bridge.mcpUrl, execBody(9, code, 60_000));
        assert.equal(json.result.structuredContent?.returns[0].value, code.length, text.slice(0, 300));
      }
      assert.ok(!bridge.logs.some((l) => l.includes('CC_LINK_MAX_UNSENT_BYTES')));
    } finally {
      await computer.close();
    }
  }));
