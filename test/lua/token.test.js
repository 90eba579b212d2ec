// The link token end to end: the real bridge with CC_LINK_TOKEN and dist/mcp-computer.lua in an
// emulated computer. The right token (flag or setting) links; a wrong or missing one stops the
// program with the fix instead of reconnecting.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startBridge } from '../../dist/bridge.js';
import { loadConfig } from '../../dist/config.js';
import { COLOURS, useComputer } from './computer.js';
import { startFakeBridge } from './fake-bridge.js';
import { describeLua } from './lua-env.js';

const T = { timeout: 60000 };
const TOKEN = 'link-token-0123456789abcdef';

async function bridgeFor(t) {
  const bridge = await startBridge(
    loadConfig({ MCP_PORT: '0', CC_LINK_PORT: '0', CC_LINK_HOST: '127.0.0.1', LOG_LEVEL: 'silent', CC_LINK_TOKEN: TOKEN }),
  );
  t.after(() => bridge.close(100));
  return bridge;
}

describeLua('link token', () => {
  test('--token <t> links', T, async (t) => {
    const bridge = await bridgeFor(t);
    const c = useComputer(t, { id: 5, url: bridge.linkUrl, args: ['--token', TOKEN] });
    await c.waitForOutput('linked as 5');
    assert.equal(bridge.links.get(5)?.computerId, 5);
  });

  test('the setting mcp.token links', T, async (t) => {
    const bridge = await bridgeFor(t);
    const c = useComputer(t, { id: 6, url: bridge.linkUrl, settings: { 'mcp.token': TOKEN } });
    await c.waitForOutput('linked as 6');
    assert.equal(bridge.links.size, 1);
  });

  for (const [what, opts] of [
    ['a wrong token', { args: ['--token', 'wrong-token-0123456789abcdef'] }],
    ['no token', {}],
  ]) {
    test(`${what}: the program stops with the fix and does not reconnect`, T, async (t) => {
      const bridge = await bridgeFor(t);
      const c = useComputer(t, { id: 7, url: bridge.linkUrl, timeScale: 1, ...opts });
      const { code } = await c.waitForExit();
      assert.equal(code, 1);
      assert.deepEqual(c.linesIn(COLOURS.red), ['the bridge refused the token: set it with', 'set mcp.token <token>  (or --token <token>)']);
      assert.doesNotMatch(c.output, /retrying|reconnecting/);
      assert.equal(bridge.links.size, 0);
      assert.equal(bridge.metrics.linksRefused.get('unauthorized'), 1, 'one attempt, no hammering');
    });
  }

  // The backoff's 1 s is 1 ms here; every longer wait (the computer's 5 s for hello-ok) is a minute,
  // so a loaded machine answering hello slowly cannot time the hello out (it did at 5 ms).
  test('hello-error busy (a bridge limit) is retried with backoff, then links', T, async (t) => {
    let n = 0;
    const bridge = await startFakeBridge({
      hello: (link) => {
        // answered a little late, as on a loaded machine
        setTimeout(() => {
          if (n++ === 0) {
            link.send({ type: 'hello-error', error: 'the bridge already has 3 links (CC_MAX_LINKS)', code: 'busy' });
            link.close(1013, 'try again later');
          } else {
            link.send({ type: 'hello-ok' });
          }
        }, 50);
      },
    });
    t.after(() => bridge.close());
    const c = useComputer(t, { id: 8, url: bridge.url, timerMs: (s) => (s <= 1 ? 1 : 60000) });
    await c.waitForOutput('linked as 8', 50000);
    assert.match(c.output, /the bridge is busy: the bridge already has 3 links \(CC_MAX_LINKS\)\nretrying in (0\.\d+|1) s/);
    assert.equal(bridge.links.length, 2);
  });

  test('a close 4401 during hello (no hello-error seen) also stops with the fix', T, async (t) => {
    const bridge = await startFakeBridge({ hello: (link) => link.close(4401, 'unauthorized') });
    t.after(() => bridge.close());
    const c = useComputer(t, { id: 9, url: bridge.url, timeScale: 1 });
    const { code } = await c.waitForExit();
    assert.equal(code, 1);
    assert.deepEqual(c.linesIn(COLOURS.red), ['the bridge refused the token: set it with', 'set mcp.token <token>  (or --token <token>)']);
    assert.equal(bridge.links.length, 1, 'no reconnect');
  });

  test('--token without a value is a usage error', T, async (t) => {
    const c = useComputer(t, { args: ['ws://127.0.0.1:1', '--token'] });
    const { code } = await c.waitForExit();
    assert.equal(code, 1);
    assert.match(c.output, /--token needs the bridge's link token/);
  });
});
