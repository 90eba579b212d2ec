// mcp-computer on a real ComputerCraft runtime (CraftOS-PC: CC's ROM settings API) when settings.save
// fails: a folder named /.settings is in the way, so CC's settings.save cannot open the file and answers
// false. The program says so in red (printError) and links anyway with the key it made, which the real
// bridge pins. Skipped with one line when CraftOS-PC is not here.
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { callTool } from '../helpers.js';
import { describeCraftos, useLinkedCraftos } from './craftos.js';

const T = { timeout: 120000 };

describeCraftos('CraftOS-PC: settings.save fails', () => {
  const ctx = useLinkedCraftos({ id: 52, pre: 'fs.makeDir(".settings")\n', post: '' });

  test('key-not-saved on CraftOS-PC: printError says the key could not be saved, the computer links and its id is pinned', T, async () => {
    const screen = ctx.pc.lines().join(' ');
    assert.match(screen, /could not save mcp\.key to \/\.settings \(full disk\?\): this run links with a new key, but after a reboot this computer makes another, which the bridge refuses until its operator runs cc-mcp pin-reset 52/);
    assert.ok(statSync(path.join(ctx.pc.files, '.settings')).isDirectory(), 'nothing was saved over the folder');
    assert.equal(ctx.bridge.pins.has(52), true);
    const probe = await callTool(ctx.bridge, 'probe-computers');
    assert.equal(probe.content[0].text, 'pong from 52 (Label: null)');
  });
});
