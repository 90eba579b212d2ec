// Audit: the link port and browser pages. WebSockets have no same-origin rule, so any web page the
// operator's browser opens can dial ws://127.0.0.1:3001 and, without CC_LINK_TOKEN, link as a
// computer (a new id, or any id not pinned to a key) and be handed the agent's code. Browsers send
// an Origin header on every WebSocket handshake; CC:Tweaked sends none. The ws clients below send
// exactly what a page's `new WebSocket(url)` sends in that header.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import WebSocket from 'ws';
import { linkComputer, withBridge } from '../helpers.js';

/** Opens a link socket with `origin` (or none) and says hello; resolves with the handshake's fate and the first frame. */
async function dial(bridge, origin, computerId, host) {
  const ws = new WebSocket(bridge.linkUrl, { ...(origin === undefined ? {} : { origin }), ...(host === undefined ? {} : { headers: { host } }) });
  const refused = once(ws, 'unexpected-response').then(([, res]) => ({ refused: res.statusCode }));
  const opened = once(ws, 'open').then(async () => {
    const first = once(ws, 'message').then(([data]) => JSON.parse(data.toString()));
    ws.send(JSON.stringify({ type: 'hello', computerId, computerLabel: 'page' }));
    return { frame: await first };
  });
  ws.on('error', () => {});
  const result = await Promise.race([refused, opened]);
  ws.terminate();
  return result;
}

test('bug: a browser page (a WebSocket handshake with an Origin header) linked as a computer on a token-less link port; now 403 before the handshake', { timeout: 60_000 }, async () => {
  await withBridge({}, async (bridge) => {
    const page = await dial(bridge, 'https://evil.example', 7);
    assert.deepEqual(page, { refused: 403 });
    // a loopback page is a web page too
    assert.deepEqual(await dial(bridge, 'http://127.0.0.1:8080', 8), { refused: 403 });
    assert.equal(bridge.links.get(7), undefined);
    assert.ok(bridge.logs.some((l) => l.includes('refused: a browser page may not link as a computer (Origin "https://evil.example", Host ')), bridge.logs.join('\n'));
    const metrics = await (await fetch(new URL('/metrics', bridge.mcpUrl))).text();
    assert.match(metrics, /cc_links_refused_total\{reason="origin"\} 2/);
    // a computer's handshake (no Origin) links as before
    const computer = await linkComputer(bridge, { computerId: 9 });
    await computer.close();
  });
});

test('CC_LINK_ALLOWED_ORIGINS lets a listed web origin link (a CC emulator in a browser); others still get 403', { timeout: 60_000 }, async () => {
  await withBridge({ CC_LINK_ALLOWED_ORIGINS: 'https://copy-cat.example' }, async (bridge) => {
    const listed = await dial(bridge, 'https://copy-cat.example', 5);
    assert.equal(listed.frame?.type, 'hello-ok');
    assert.deepEqual(await dial(bridge, 'https://other.example', 6), { refused: 403 });
  });
});

test('a Java client that names the address it dials as its Origin (Netty adds http://<Host> unless told not to) links; a page reaching the loopback link port through its own name (DNS rebinding) does not', { timeout: 60_000 }, async () => {
  await withBridge({}, async (bridge) => {
    const host = new URL(bridge.linkUrl).host;
    assert.equal((await dial(bridge, `http://${host}`, 11)).frame?.type, 'hello-ok');
    assert.equal((await dial(bridge, `https://${host}`, 12)).frame?.type, 'hello-ok');
    const port = new URL(bridge.linkUrl).port;
    assert.deepEqual(await dial(bridge, `http://rebind.example:${port}`, 13, `rebind.example:${port}`), { refused: 403 });
    assert.ok(bridge.logs.some((l) => l.includes('through its own name (DNS rebinding)')), bridge.logs.join('\n'));
    // another site's page naming the loopback address it dials is still another site
    assert.deepEqual(await dial(bridge, `http://evil.example`, 14), { refused: 403 });
  });
});
