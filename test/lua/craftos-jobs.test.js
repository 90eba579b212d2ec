// On CraftOS-PC (a real CC runtime): returned tables with colliding keys keep every value
// (key-collisions). Skipped with one line when CraftOS-PC is not on this machine.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startBridge } from '../../dist/bridge.js';
import { loadConfig } from '../../dist/config.js';
import { CRAFTOS_DIR, CraftosComputer } from './craftos.js';
import { callTool } from './mcp-helpers.js';
import { COLLIDING_CODE, checkColliding } from './collisions.js';

const T = { timeout: 60000 };
const READY = 'waiting for requests... Press Ctrl+T to stop.';
const ID = 33;

if (!CRAFTOS_DIR) {
  test('CraftOS-PC jobs and key tests', { skip: 'CraftOS-PC not found (set CRAFTOS_PC_DIR or put it in ../shared/craftos-pc)' }, () => {});
} else {
  describe('CraftOS-PC: returned tables with colliding keys', () => {
    let bridge;
    let pc;
    before(async () => {
      bridge = await startBridge(loadConfig({ MCP_PORT: '0', CC_LINK_PORT: '0', LOG_LEVEL: 'error' }));
      pc = new CraftosComputer({
        id: ID,
        startup: `shell.run("mcp-computer", ${JSON.stringify(bridge.linkUrl)})\nos.shutdown()\n`,
      });
      await pc.waitForOutput(READY, 60000);
    });
    after(async () => {
      pc?.cleanup();
      await bridge?.close(100);
    });

    test('three and more keys with the same JSON text each keep their value (key-collisions)', T, async () => {
      const sc = (await callTool(bridge, 'exec-lua', { computerId: ID, code: COLLIDING_CODE })).structuredContent;
      assert.equal(sc.ok, true, JSON.stringify(sc).slice(0, 300));
      assert.equal(sc.truncated, false);
      checkColliding(sc.returns);
    });
  });
}
