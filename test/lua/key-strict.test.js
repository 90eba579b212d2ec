// mcp-computer under cc-emu.lua against a real bridge with CC_LINK_PIN=strict: a computer whose id is
// not enrolled prints the bridge's reason and stops after one attempt (no reconnect loop); once the
// operator lets its id in (POST /pins/<id>/reset, what cc-mcp pin-reset sends), the program started
// again links and its key is pinned in the pins file.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { startBridge } from '../../dist/bridge.js';
import { loadConfig } from '../../dist/config.js';
import { COLOURS, useComputer } from './computer.js';
import { describeLua } from './lua-env.js';

const T = { timeout: 60000 };

describeLua('CC_LINK_PIN=strict (mcp-computer)', () => {
  test('not enrolled: the program prints why and stops after one hello; after the operator lets the id in, it links and is pinned', T, async (t) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'pins-lua-'));
    const file = path.join(dir, 'pins');
    writeFileSync(file, '');
    const bridge = await startBridge(loadConfig({ MCP_PORT: '0', CC_LINK_PORT: '0', CC_LINK_HOST: '127.0.0.1', LOG_LEVEL: 'silent', CC_LINK_PIN: 'strict', CC_LINK_PINS_FILE: file }));
    // closed (its last pins written) before its directory is removed
    t.after(async () => {
      await bridge.close(100);
      rmSync(dir, { recursive: true, force: true });
    });
    const refused = useComputer(t, { id: 21, url: bridge.linkUrl, timeScale: 1 }); // real seconds: the 5 s hello timeout must not beat the refusal on a loaded machine
    const { code } = await refused.waitForExit();
    assert.equal(code, 1);
    const red = refused.linesIn(COLOURS.red).join(' ');
    assert.match(red, /The bridge refused this computer: computer id 21 does not link with this key: this bridge takes only computer ids it has pinned, each with the key \(mcp\.key\) it is pinned to \(CC_LINK_PIN=strict\)/);
    assert.match(red, /cc-mcp pin-reset 21/);
    assert.doesNotMatch(refused.output, /retrying|reconnecting/);
    assert.equal(bridge.metrics.linksRefused.get('not_enrolled'), 1, 'one attempt, no hammering');
    // the computer made and saved its key before it was refused: the same key comes back
    const settings = readFileSync(path.join(refused.root, '.settings'), 'utf8');
    const key = /\[ "mcp\.key" \] = "([A-Za-z0-9_-]+)"/.exec(settings)?.[1];
    assert.ok(key, settings);

    const res = await fetch(bridge.mcpUrl.replace(/\/mcp$/, '/pins/21/reset'), { method: 'POST' });
    assert.equal(res.status, 200);
    const again = useComputer(t, { id: 21, url: bridge.linkUrl, files: { '.settings': settings } });
    await again.waitForOutput('waiting for requests');
    assert.equal(bridge.pins.has(21), true);
    const sha = createHash('sha256').update(key).digest('hex');
    await bridge.close(100);
    assert.equal(readFileSync(file, 'utf8').split('\n').filter((l) => !l.startsWith('#') && l !== '').join('\n'), `21 ${sha}`);
  });
});
