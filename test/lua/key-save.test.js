// mcp-computer when settings.save fails (cc-emu.lua --settings-save-fails: CC could not open /.settings,
// e.g. a full disk): the key made for this run is not saved. What the program does: it says so in red
// (printError) without printing the key, links with the key anyway (the bridge pins the id), and after
// a reboot makes another key, which that bridge refuses (key_mismatch): the program prints why and
// stops, until the operator resets the pin.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { startBridge } from '../../dist/bridge.js';
import { loadConfig } from '../../dist/config.js';
import { COLOURS, useComputer } from './computer.js';
import { startFakeBridge } from './fake-bridge.js';
import { describeLua } from './lua-env.js';

const T = { timeout: 60000 };
const SAVE_FAILED = /^could not save mcp\.key to \/\.settings \(full disk\?\): this run links with a new key, but after a reboot this computer makes another, which the bridge refuses until its operator runs cc-mcp pin-reset 14$/;

describeLua('computer key when settings.save fails', () => {
  test('the program says so with printError, still links with its key, and saves nothing', T, async (t) => {
    const bridge = await startFakeBridge();
    t.after(() => bridge.close());
    const c = useComputer(t, { id: 14, url: bridge.url, settingsSaveFails: true });
    await c.waitForOutput('waiting for requests');
    const key = (await bridge.link(0)).frames[0].key;
    assert.match(key, /^[A-Za-z0-9_-]{32}$/, 'the hello carries the key made for this run');
    const red = c.linesIn(COLOURS.red).join('\n');
    assert.match(red, SAVE_FAILED);
    assert.ok(!c.output.includes(key) && !c.stderr.includes(key), 'the key is never printed');
    assert.equal(existsSync(path.join(c.root, '.settings')), false, 'nothing was saved');
  });

  test('against the real bridge: it links and is pinned; after a reboot its new key is refused and the program stops; the operator reset lets it in', T, async (t) => {
    const bridge = await startBridge(loadConfig({ MCP_PORT: '0', CC_LINK_PORT: '0', CC_LINK_HOST: '127.0.0.1', LOG_LEVEL: 'silent' }));
    t.after(() => bridge.close(100));
    const first = useComputer(t, { id: 14, url: bridge.linkUrl, settingsSaveFails: true });
    await first.waitForOutput('waiting for requests');
    assert.equal(bridge.pins.has(14), true);
    first.kill();
    await first.exited;
    // a reboot: nothing was saved, so the program makes another key
    const rebooted = useComputer(t, { id: 14, url: bridge.linkUrl, settingsSaveFails: true, timeScale: 1 }); // real seconds: the 5 s hello timeout must not beat the refusal
    const { code } = await rebooted.waitForExit();
    assert.equal(code, 1);
    const red = rebooted.linesIn(COLOURS.red).join(' ');
    assert.match(red, /could not save mcp\.key/);
    assert.match(red, /The bridge refused this computer: computer id 14 is held by another key/);
    assert.doesNotMatch(rebooted.output, /retrying|reconnecting/);
    assert.equal(bridge.metrics.linksRefused.get('key_mismatch'), 1);
    const res = await fetch(bridge.mcpUrl.replace(/\/mcp$/, '/pins/14/reset'), { method: 'POST' });
    assert.equal(res.status, 200);
    const again = useComputer(t, { id: 14, url: bridge.linkUrl, settingsSaveFails: true });
    await again.waitForOutput('waiting for requests');
    assert.equal(bridge.links.get(14)?.computerId, 14);
  });
});
