// Issue 14, harness: the window API every CC computer has, and an advanced
// computer's multishell (--multishell), checked against CraftOS-PC (CC's own
// ROM) where both can run the same code.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startBridge } from '../../dist/bridge.js';
import { loadConfig } from '../../dist/config.js';
import { useComputer, linkedOnFakeBridge as linked } from './computer.js';
import { CRAFTOS_DIR, CraftosComputer } from './craftos.js';
import { startFakeBridge } from './fake-bridge.js';
import { describeLua } from './lua-env.js';

const T = { timeout: 30000 };

// The same chunk runs on the harness and on CraftOS-PC: the answers must match.
const WINDOW_CODE = `
  local w = window.create(term.current(), 2, 3, 8, 3, false)
  w.setTextColour(colours.red) w.write("hi") w.setCursorPos(3, 2) w.blit("aB", "12", "3F")
  local a, b, c = w.getLine(1)
  local d, e, f = w.getLine(2)
  local ok, err = pcall(w.getLine, 4)
  w.scroll(1)
  local g = w.getLine(1)
  local cx, cy = w.getCursorPos()
  local px, py = w.getPosition()
  w.reposition(1, 1, 4, 2)
  local h = w.getLine(1)
  local ok2, err2 = pcall(window.create, term, 1, 1, 2, 2)
  return a, b, c, d, e, f, ok, err, g, cx, cy, px, py, w.isVisible(), h, select("#", w.getSize()), ok2, err2`;
const WINDOW_RESULT = [
  'hi      ', 'ee000000', 'ffffffff', '  aB    ', '00120000', 'ff3fffff', false, 'Line is out of range.',
  '  aB    ', 5, 2, 2, 3, false, '  aB', 2, false,
];

// A program launched in a new tab sees only the plain terminal methods of
// its window (multishell copies the keys of term.native(): no getLine).
const TAB_CODE = `
  local f = fs.open("/probe.lua", "w")
  f.write('local f = fs.open("/seen.txt", "w") f.write(type(term.current().getLine) .. " " .. type(term.current().write)) f.close()')
  f.close()
  local count, current, title = multishell.getCount(), multishell.getCurrent(), multishell.getTitle(multishell.getCurrent())
  local tab = multishell.launch({}, "/probe.lua")
  local r = fs.open("/seen.txt", "r")
  local seen = r.readAll()
  r.close()
  return count, current, title, type(window.create), tab, multishell.getCount(), seen`;
const TAB_RESULT = [1, 1, 'mcp-computer', 'function', 2, 2, 'nil function'];

const values = (returns) => returns.map((d) => (d.type === 'nil' ? null : d.value));

describeLua('harness: the window API (CC: rom/apis/window.lua)', () => {
  test('window.create: buffer, colours, getLine, scroll, reposition, errors', T, async (t) => {
    const { link } = await linked(t);
    const res = await link.exec(WINDOW_CODE);
    assert.equal(res.ok, true, JSON.stringify(res));
    const got = values(res.result.returns);
    assert.deepEqual(got.slice(0, -1), WINDOW_RESULT);
    assert.match(got.at(-1), /term is not a recommended window parent, try term\.current\(\) instead$/);
  });
});

describeLua('harness: an advanced computer under multishell (--multishell)', () => {
  test('the program runs in tab 1; a program in a new tab sees the plain terminal view of its window', T, async (t) => {
    const { link } = await linked(t, { multishell: true });
    const res = await link.exec(TAB_CODE);
    assert.deepEqual(values(ok(res).returns), TAB_RESULT);
  });

  test('--background opens the link in a tab titled "mcp" and the link works there', T, async (t) => {
    const bridge = await startFakeBridge();
    t.after(() => bridge.close());
    const c = useComputer(t, { url: bridge.url, multishell: true, args: ['--background'] });
    await c.waitForOutput(/in tab 2/);
    const link = await bridge.liveLink(); // (not link(0): the 5 s hello wait is 50 ms here)
    const res = await link.exec('return multishell.getTitle(multishell.getCurrent()), multishell.getCurrent()');
    const [title] = values(ok(res).returns);
    assert.equal(title, 'mcp');
    assert.equal((await link.request('ping')).ok, true);
  });
});

describeLua('send-input on an advanced computer: keyboard events go to the focused tab only', () => {
  // Tab 1: the player's shell ran --background (the link went to tab 2), then reads keys: enter prints
  // how many characters it got.
  const BOOT = (url) => `
shell.run("mcp-computer", ${JSON.stringify(url)}, "--background")
local n = 0
while true do
    local e, a = os.pullEvent()
    if e == "char" then n = n + 1
    elseif e == "key" and a == keys.enter then print("chars " .. n) end
end
`;

  test('bug: with the link\'s own tab focused, send-input answered ok and its keys went to that tab, never to the shell read-screen reads', T, async (t) => {
    const bridge = await startFakeBridge();
    t.after(() => bridge.close());
    const c = useComputer(t, { command: 'boot', multishell: true, files: { 'boot.lua': BOOT(bridge.url) } });
    await c.waitForOutput(/in tab 2/);
    const link = await bridge.liveLink();
    ok(await link.request('send-input', { text: 'abc\n' }));
    await c.waitForOutput('chars 3');
    // the player (here a chunk) switches to the link's tab
    assert.deepEqual(values(ok(await link.exec('return multishell.setFocus(2), multishell.getFocus()')).returns), [true, 2]);
    const refused = await link.request('send-input', { text: 'de\n' });
    assert.equal(refused.ok, false, JSON.stringify(refused));
    assert.match(refused.error, /^the focused tab is tab 2 "mcp", mcp-computer's own, not the shell tab \(tab 1\) that read-screen reads: CC gives keyboard events to the focused tab only\. Switch to the shell tab/);
    // another tab of the player's: refused too
    ok(await link.exec('shell.openTab("boot-other") multishell.setFocus(3)'));
    assert.match((await link.request('send-input', { keys: ['enter'] })).error, /^the focused tab is tab 3 "boot-other", not the shell tab \(tab 1\)/);
    // back on the shell tab: typed there
    ok(await link.exec('multishell.setFocus(1)'));
    const mark = c.output.length;
    ok(await link.request('send-input', { text: 'fg\n' }));
    await c.waitForOutput('chars 5', 10000, mark);
  });
});

describeLua('send-input and read-screen once the shell tab ended without exit', () => {
  // Tab 1: a program that reads keys; tab 2: a tab opened for "mcp-computer --background" alone (its
  // shell ends once the launcher returns, as a tab opened for one program does); tab 3: the link.
  const BOOT = (url) => `
shell.openTab("mcp-computer", ${JSON.stringify(url)}, "--background")
local n = 0
while true do
    local e, a = os.pullEvent()
    if e == "char" then n = n + 1
    elseif e == "key" and a == keys.enter then print("chars " .. n) end
end
`;

  test('bug: once the tab the launcher ran in had ended (its program returned), send-input gave its keys to tab 1 and read-screen showed the ended tab\'s last screen', T, async (t) => {
    const bridge = await startFakeBridge();
    t.after(() => bridge.close());
    const c = useComputer(t, { command: 'boot', multishell: true, files: { 'boot.lua': BOOT(bridge.url) } });
    const link = await bridge.liveLink();
    assert.deepEqual(values(ok(await link.exec('return multishell.getCurrent(), multishell.getCount()')).returns), [3, 3]);
    // tab 2 waits for a key ("Press any key to continue"): the player gives it one and it closes
    ok(await link.exec('multishell.setFocus(2) os.queueEvent("char", "x")'));
    assert.deepEqual(values(ok(await link.exec('return multishell.getCurrent(), multishell.getFocus()')).returns), [2, 1]);
    const refused = await link.request('send-input', { text: 'ab\n' });
    assert.equal(refused.ok, false, JSON.stringify(refused));
    assert.match(refused.error, /^the shell tab that read-screen reads \(the one that ran mcp-computer --background\) has closed/);
    const screen = await link.request('read-screen', {});
    assert.equal(screen.ok, false, JSON.stringify(screen));
    assert.match(screen.error, /^the shell tab that read-screen reads .* has closed/);
    // nothing reached tab 1
    ok(await link.exec('os.queueEvent("key", keys.enter)'));
    await c.waitForOutput('chars 0');
  });
});

describeLua('send-input after a tab before the shell tab closed: multishell\'s list, or the guess without it', () => {
  // Tab 1: a program that ends on an event; tab 2: a shell-like program that ran --background;
  // tab 3: the link. Once tab 1 ends, the shell is tab 1 and the link tab 2.
  const files = (url, hideDebug) => ({
    'boot.lua': 'shell.openTab("sh2") os.pullEvent("mcp_test_end")\n',
    'sh2.lua': `${hideDebug ? '_G.debug = nil\n' : ''}shell.run("mcp-computer", ${JSON.stringify(url)}, "--background")\nwhile true do os.pullEvent() end\n`,
  });
  for (const hideDebug of [false, true]) {
    test(`${hideDebug ? 'without the debug library the shell tab is guessed (tab 1 to 2)' : 'multishell\'s list says the shell tab is tab 1'}`, T, async (t) => {
      const bridge = await startFakeBridge();
      t.after(() => bridge.close());
      useComputer(t, { command: 'boot', multishell: true, files: files(bridge.url, hideDebug) });
      const link = await bridge.liveLink();
      assert.deepEqual(values(ok(await link.exec('return multishell.getCurrent(), multishell.getCount()')).returns), [3, 3]);
      ok(await link.exec('os.queueEvent("mcp_test_end")'));
      assert.deepEqual(values(ok(await link.exec('multishell.setFocus(2) return multishell.getCurrent(), multishell.getFocus()')).returns), [2, 2]);
      const refused = await link.request('send-input', { text: 'x' });
      assert.equal(refused.ok, false, JSON.stringify(refused));
      assert.match(refused.error, hideDebug ? /^the focused tab is tab 2 "mcp", mcp-computer's own, not the shell tab \(tab 1 to 2\)/
        : /^the focused tab is tab 2 "mcp", mcp-computer's own, not the shell tab \(tab 1\)/);
      ok(await link.exec('multishell.setFocus(1)'));
      assert.equal((await link.request('send-input', { text: 'x' })).ok, true);
    });
  }
});

describeLua('send-input paste in CC\'s character set', () => {
  const BOOT = (url) => `
shell.run("mcp-computer", ${JSON.stringify(url)}, "--background")
while true do
    local line = read()
    local t = {}
    for i = 1, #line do t[i] = line:byte(i) end
    print("got " .. table.concat(t, ","))
end
`;

  test('bug: a paste went to the program as the UTF-8 bytes of its text ("é" as two characters), where typed text and a player\'s paste give one character per code point', T, async (t) => {
    const bridge = await startFakeBridge();
    t.after(() => bridge.close());
    const c = useComputer(t, { command: 'boot', multishell: true, files: { 'boot.lua': BOOT(bridge.url) } });
    const link = await bridge.liveLink();
    ok(await link.request('send-input', { text: 'é☃x\u0001\u00ad', paste: true }));
    ok(await link.request('send-input', { keys: ['enter'] }));
    await c.waitForOutput('got 233,63,120,63,63');
    // what CC's paste cannot hold is refused, saying why
    const lines = await link.request('send-input', { text: 'a\nb', paste: true });
    assert.match(lines.error, /^a paste is one line in CC \(a player's paste stops at the first line break\)/);
    const long = await link.request('send-input', { text: 'é'.repeat(513), paste: true });
    assert.equal(long.error, 'a paste is at most 512 characters in CC: send longer text in parts');
    ok(await link.request('send-input', { text: 'é'.repeat(512), paste: true }));
  });

  test('bug: read-screen read two bytes a program printed that happen to be UTF-8 (CC draws "\\195\\169" as "Ã©") as one character, so the row was shorter than the screen', T, async (t) => {
    const bridge = await startFakeBridge();
    t.after(() => bridge.close());
    const boot = `shell.run("mcp-computer", ${JSON.stringify(bridge.url)}, "--background")\nprint("\\195\\169t\\233")\nwhile true do os.pullEvent() end\n`;
    useComputer(t, { command: 'boot', multishell: true, files: { 'boot.lua': boot } });
    const link = await bridge.liveLink();
    let s;
    for (let i = 0; i < 200 && !s?.lines.some((l) => l.includes('t\u00e9')); i++) {
      if (i) await new Promise((r) => setTimeout(r, 25));
      s = ok(await link.request('read-screen', {}));
    }
    const row = s.lines.find((l) => l.includes('t\u00e9'));
    assert.equal(row?.trimEnd(), '\u00c3\u00a9t\u00e9', JSON.stringify(s.lines));
    assert.ok(s.lines.every((l) => l.length === s.width), 'every row is as wide as the screen');
  });
});

function ok(res) {
  assert.equal(res.ok, true, JSON.stringify(res));
  return res.result;
}

if (CRAFTOS_DIR) {
  describe('CraftOS-PC: the same window and multishell answers as the harness', () => {
    let bridge;
    let pc;
    before(async () => {
      bridge = await startBridge(loadConfig({ MCP_PORT: '0', CC_LINK_PORT: '0', LOG_LEVEL: 'error' }));
      pc = new CraftosComputer({ id: 21, startup: `shell.run("mcp-computer", ${JSON.stringify(bridge.linkUrl)})\nos.shutdown()\n` });
      await pc.waitForOutput('waiting for requests... Press Ctrl+T to stop.');
    });
    after(async () => {
      pc?.cleanup();
      await bridge?.close(100);
    });
    const exec = async (code) => {
      const res = await fetch(bridge.mcpUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'exec-lua', arguments: { computerId: 21, code } } }),
      });
      return (await res.json()).result.structuredContent;
    };

    test('window.create gives the same answers', T, async () => {
      const sc = await exec(WINDOW_CODE);
      assert.equal(sc.ok, true, JSON.stringify(sc));
      const got = values(sc.returns);
      assert.deepEqual(got.slice(0, -1), WINDOW_RESULT);
      assert.match(got.at(-1), /term is not a recommended window parent, try term\.current\(\) instead$/);
    });

    test('the program started from startup runs in multishell tab 1; a new tab sees the plain terminal view', T, async () => {
      const sc = await exec(TAB_CODE);
      assert.deepEqual(values(sc.returns), TAB_RESULT);
    });
  });
}
