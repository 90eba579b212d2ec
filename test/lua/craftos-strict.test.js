// CC_LINK_PIN=strict on a real ComputerCraft runtime (CraftOS-PC: CC's ROM, its settings API and real
// websockets): a computer whose id is not enrolled is refused and mcp-computer says why (and how the
// operator lets it in) and stops; after the operator's `cc-mcp pin-reset <id>` the computer started
// again (a new CraftOS-PC process on its own files, not os.reboot(), which segfaults in CraftOS-PC
// v2.8.1 about 1 run in 40) links with the key it saved at the first run, and that key is pinned in
// the pins file; another computer claiming the id with its own key is refused. A reset while it is
// linked closes its link (4410): mcp-computer says so and stops, and started again it is pinned anew.
// Skipped with one line when CraftOS-PC is not here.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { startBridge } from '../../dist/bridge.js';
import { callTool, until } from '../helpers.js';
import { bridgeConfig, CraftosComputer, describeCraftos, READY, REPO, runLine } from './craftos.js';

const T = { timeout: 120000 };
const ID = 53;
const CLI = path.join(REPO, 'dist', 'cli', 'index.js');
const savedKey = (pc) => readFileSync(path.join(pc.files, '.settings'), 'utf8').match(/"?mcp\.key"?\s*\]?\s*=\s*"([A-Za-z0-9_-]+)"/)?.[1];
/** The screen as one line: rows wrap at 51 columns. */
const screenText = (pc) => pc.lines().join(' ').replace(/\s+/g, ' ');
const pinLines = (file) => readFileSync(file, 'utf8').split('\n').filter((l) => l !== '' && !l.startsWith('#'));

describeCraftos('CraftOS-PC: CC_LINK_PIN=strict', () => {
  const ctx = { dir: null, file: null, bridge: null, pcs: [] };
  before(async () => {
    ctx.dir = mkdtempSync(path.join(tmpdir(), 'craftos-strict-'));
    ctx.file = path.join(ctx.dir, 'pins');
    writeFileSync(ctx.file, '', { mode: 0o600 });
    ctx.bridge = await startBridge(bridgeConfig({ CC_LINK_PIN: 'strict', CC_LINK_PINS_FILE: ctx.file }));
  });
  after(async () => {
    for (const pc of ctx.pcs) pc.cleanup();
    await ctx.bridge?.close(100);
    rmSync(ctx.dir, { recursive: true, force: true });
  });
  const boot = (options) => {
    const pc = new CraftosComputer({ id: ID, ...options });
    ctx.pcs.push(pc);
    return pc;
  };

  test('strict on CraftOS-PC: an unenrolled computer is refused with the reason and the command that lets it in; after cc-mcp pin-reset it links and its saved key is pinned; an impostor with its own key is refused', T, async () => {
    const { bridge, file } = ctx;
    // the computer runs mcp-computer at each start and shuts down when the program ends
    const first = boot({ startup: runLine(bridge.linkUrl) + 'os.shutdown()\n' });
    await first.waitForExit(60000);
    const refused = screenText(first);
    assert.match(refused, /The bridge refused this computer: computer id 53 does not link with this key: this bridge takes only computer ids it has pinned, each with the key \(mcp\.key\) it is pinned to \(CC_LINK_PIN=strict\)\. If this computer is new or was reinstalled, the bridge's operator lets it in with: cc-mcp pin-reset 53/, first.screen());
    assert.doesNotMatch(refused, /retrying in|reconnecting to/, 'one attempt: a refusal is not retried');
    assert.doesNotMatch(refused, new RegExp(READY.replace(/[.]/g, '\\.')));
    assert.equal(bridge.metrics.linksRefused.get('not_enrolled'), 1);
    assert.equal(bridge.pins.has(ID), false);
    assert.deepEqual(pinLines(file), []);
    // the key was made and saved before the hello (the first run that links keeps it)
    const key = savedKey(first);
    assert.match(key ?? '', /^[A-Za-z0-9_-]{32}$/);
    assert.ok(!first.output.includes(key), 'the key is never printed');

    // the operator lets the id in with the CLI (POST /pins/53/reset)
    const cli = await promisify(execFile)(process.execPath, [CLI, '--url', bridge.mcpUrl, 'pin-reset', String(ID)], { env: { PATH: process.env.PATH } });
    assert.match(cli.stdout, /53/);
    assert.equal(bridge.pins.isOpen(ID), true);

    // the player starts the computer again (its own files, the saved key)
    const second = boot({ id: ID, root: first.root });
    await second.waitForOutput(READY, 60000);
    assert.equal(savedKey(second), key, 'the same key');
    assert.equal(bridge.pins.has(ID), true);
    assert.equal(bridge.pins.isOpen(ID), false, 'the opening is used up');
    const digest = createHash('sha256').update(key).digest('hex');
    await until(() => pinLines(file).length === 1, 20, 20000);
    assert.deepEqual(pinLines(file), [`${ID} ${digest}`]);
    const probe = await callTool(bridge, 'probe-computers');
    assert.equal(probe.content[0].text, `pong from ${ID} (Label: null)`);

    // an impostor: another computer with the same id and its own new key (fresh files)
    const impostor = boot({ startup: runLine(bridge.linkUrl) + 'os.shutdown()\n' });
    await impostor.waitForExit(60000);
    const mismatch = screenText(impostor);
    assert.match(mismatch, /The bridge refused this computer: computer id 53 does not link with this key/, impostor.screen());
    assert.doesNotMatch(mismatch, /retrying in|reconnecting to/);
    assert.notEqual(savedKey(impostor), key);
    assert.equal(bridge.metrics.linksRefused.get('key_mismatch'), 1);
    // the enrolled computer keeps its link and its pin
    assert.deepEqual(pinLines(file), [`${ID} ${digest}`]);
    assert.equal((await callTool(bridge, 'probe-computers')).content[0].text, `pong from ${ID} (Label: null)`);

    // the operator resets the pin while the computer is linked: its link is closed (4410), mcp-computer
    // says so and stops (the startup then shuts the computer down); the reset distrusts its key, so
    // started again it is refused with what to do, until the operator lets the key in again
    const reset = await fetch(bridge.mcpUrl.replace(/\/mcp$/, `/pins/${ID}/reset`), { method: 'POST' }).then((r) => r.json());
    assert.equal(reset.closed, true);
    await second.waitForExit(60000);
    assert.match(screenText(second), /the bridge's operator reset the pin of computer 53 \(code 4410\): its key is no longer trusted here; give this computer a new key \(set mcp\.key new\), then start mcp-computer again/, second.screen());
    assert.equal(bridge.links.get(ID), undefined);
    const distrusted = boot({ id: ID, root: first.root });
    await distrusted.waitForExit(60000);
    assert.match(screenText(distrusted), /The bridge refused this computer: computer id 53 was reset by the bridge's operator, and this hello carries the key that reset stopped trusting/, distrusted.screen());
    assert.equal(bridge.pins.isOpen(ID), true, 'the old key did not take the opening');
    const allow = await promisify(execFile)(process.execPath, [CLI, '--url', bridge.mcpUrl, 'pin-reset', String(ID), '--allow-old-key'], { env: { PATH: process.env.PATH } });
    assert.match(allow.stdout, /may pin it again \(--allow-old-key\)/);
    const third = boot({ id: ID, root: first.root });
    await third.waitForOutput(READY, 60000);
    assert.equal(bridge.pins.has(ID), true);
    assert.equal(bridge.pins.isOpen(ID), false);
    assert.equal((await callTool(bridge, 'probe-computers')).content[0].text, `pong from ${ID} (Label: null)`);
  });
});
