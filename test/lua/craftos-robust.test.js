// Hostile and odd exec-lua chunks on a real ComputerCraft runtime (CraftOS-PC: CC:Tweaked's ROM,
// real websockets): the program answers each and the link stays up. Runs when the runtime is on
// this machine (see craftos.js).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeCraftos, useLinkedCraftos } from './craftos.js';
import { callTool, textOf as text, untilDone } from './mcp-helpers.js';

const T = { timeout: 90000 };

describeCraftos('CraftOS-PC: odd chunks get answers and the link stays up', () => {
  const ctx = useLinkedCraftos({ id: 16, post: '' });
  const exec = (code, extra = {}) => callTool(ctx.bridge, 'exec-lua', { computerId: 16, code, timeoutMs: 20000, ...extra });
  const stillLinked = async () => {
    const r = await exec('return "up"');
    assert.equal(r.isError, undefined, text(r));
    assert.deepEqual(r.structuredContent.returns, [{ type: 'string', value: 'up' }]);
  };

  test('bug: a chunk\'s own websocket to the bridge\'s URL was taken for the link\'s: the program closed it as a late connect and the link dropped', T, async () => {
    const url = JSON.stringify(ctx.bridge.linkUrl);
    const r = await exec(`local ws, err = http.websocket(${url}) if not ws then return "no websocket", err end ws.close() sleep(0.5) return "closed my own"`);
    assert.equal(r.isError, undefined, text(r));
    assert.deepEqual(r.structuredContent.returns, [{ type: 'string', value: 'closed my own' }]);
    await stillLinked();
    // its messages are the chunk's too: the bridge's answer to a frame that is not a hello
    const m = await exec(`local ws = assert(http.websocket(${url})) ws.send("{}") local msg = ws.receive(5) ws.close() return msg ~= nil`);
    assert.equal(m.isError, undefined, text(m));
    await stillLinked();
  });

  test('error objects that are not strings: a table, nil, a __tostring that fails or yields', T, async () => {
    const cases = [
      ['error({code = 1})', /^error: table: [0-9a-fx]+$/],
      ['error(nil)', /^error: error \(no message\)$/],
      ['error()', /^error: error \(no message\)$/],
      ['error(setmetatable({}, {__tostring = function() error("boom") end}))', /^error: error object of type table$/],
      ['error(setmetatable({}, {__tostring = function() sleep(0) return "x" end}))', /^error: error object of type table$/],
      ['error(setmetatable({}, {__tostring = function() return "mine" end}))', /^error: mine$/],
    ];
    for (const [code, want] of cases) {
      const r = await exec(code);
      assert.equal(r.isError, true, code);
      assert.match(text(r), want, code);
    }
    await stillLinked();
  });

  test('bug: an error object whose __tostring gave back a table got no answer (the call timed out; the program failed building it)', T, async () => {
    const r = await exec('error(setmetatable({}, {__tostring = function() return {} end}))', { timeoutMs: 10000 });
    assert.equal(r.isError, true, text(r));
    assert.equal(text(r), 'error: error object of type table');
    await stillLinked();
  });

  test('bug: a chunk queueing more events than CC\'s queue holds between its yields (a flood loop) was not stopped by mcp-computer: CC:Tweaked drops the overflow silently, the link\'s frames with it (CraftOS-PC\'s queue raises "Could not allocate space for event" instead, which did not say why)', T, async () => {
    const r = await exec('while true do for i = 1, 300 do os.queueEvent("x") end os.pullEvent("x") end', { timeoutMs: 10000 });
    assert.equal(r.isError, true, text(r));
    assert.match(text(r), /^error: exec-lua:1: os\.queueEvent: more than 256 events queued without a yield; CC's event queue holds 256/);
    await stillLinked();
  });

  test('values JSON cannot say (nan, inf, -0, functions, threads, cycles, odd keys, a __pairs that fails) are described', T, async () => {
    const n = await exec('return 0/0, 1/0, -1/0, -0, 2^53');
    assert.deepEqual(n.structuredContent.returns, [
      { type: 'number', repr: 'nan' }, { type: 'number', repr: 'inf' }, { type: 'number', repr: '-inf' },
      { type: 'number', value: 0 }, { type: 'number', value: 9007199254740992 },
    ]);
    const f = await exec('return print, coroutine.create(print)');
    assert.deepEqual(f.structuredContent.returns.map((d) => [d.type, /^(function|thread): /.test(d.repr)]), [['function', true], ['thread', true]]);
    const c = await exec('local t = {} t.self = t t[1] = t return t');
    assert.deepEqual(c.structuredContent.returns, [{ type: 'table', value: { 1: '<cycle>', self: '<cycle>' } }]);
    const mixed = await exec('return {1, 2, 3, x = 1}, {[true] = 2, [1.5] = 4}');
    assert.deepEqual(mixed.structuredContent.returns, [{ type: 'table', value: { 1: 1, 2: 2, 3: 3, x: 1 } }, { type: 'table', value: { true: 2, '1.5': 4 } }]);
    const meta = await exec('return setmetatable({1}, {__pairs = function() error("p") end, __index = function() error("i") end, __len = function() error("l") end})');
    assert.deepEqual(meta.structuredContent.returns, [{ type: 'table', value: [1] }]);
    await stillLinked();
  });

  test('a chunk that waits for websocket_message never gets the link\'s frames, and other calls are answered meanwhile', T, async () => {
    const waiting = exec('local ev = {os.pullEvent("websocket_message")} return ev[2], ev[3]', { timeoutMs: 4000 });
    await stillLinked();
    const r = await waiting;
    assert.equal(r.isError, true);
    assert.match(text(r), /timed out after 4000 ms/);
    await stillLinked();
  });
});

describeCraftos('CraftOS-PC: a chunk\'s own terminate ends that chunk, not mcp-computer (foreground)', () => {
  const ctx = useLinkedCraftos({ id: 17, post: '' });
  const exec = (code, extra = {}) => callTool(ctx.bridge, 'exec-lua', { computerId: 17, code, timeoutMs: 20000, ...extra });

  test('bug: os.queueEvent("terminate") in a chunk stopped mcp-computer; now that chunk ends with "Terminated", and a terminate no chunk queued still stops it', T, async () => {
    const r = await exec('print("before") os.queueEvent("terminate") os.pullEvent() return "not reached"');
    assert.equal(r.isError, true, text(r));
    assert.match(text(r), /Terminated/);
    assert.equal(r.structuredContent.output, 'before\n');
    const slept = await exec('os.queueEvent("terminate") sleep(30)');
    assert.match(text(slept), /Terminated/);
    const raw = await exec('os.queueEvent("terminate") return os.pullEventRaw()');
    assert.deepEqual(raw.structuredContent.returns, [{ type: 'string', value: 'terminate' }]);
    const up = await exec('return "up"');
    assert.deepEqual(up.structuredContent.returns, [{ type: 'string', value: 'up' }], text(up));
    assert.doesNotMatch(ctx.pc.output, /mcp-computer stopped/);
    // nor from the chunk's metamethods run while its answer is built (after its last resume)
    const key = await exec('return {[setmetatable({}, {__tostring = function() os.queueEvent("terminate") return "k" end})] = 1}');
    assert.deepEqual(key.structuredContent.returns, [{ type: 'table', value: { k: 1 } }], text(key));
    const err = await exec('error(setmetatable({}, {__tostring = function() os.queueEvent("terminate") return "e" end}))');
    assert.equal(text(err), 'error: e');
    const still = await exec('return "up"');
    assert.deepEqual(still.structuredContent.returns, [{ type: 'string', value: 'up' }], text(still));
    assert.doesNotMatch(ctx.pc.output, /mcp-computer stopped/);
    // a terminate from outside every chunk (here a program in a new tab: multishell gives it to the
    // focused tab, the link's) is taken for the player's Ctrl+T
    const tab = await exec('local f = fs.open("/later.lua", "w") f.write("sleep(0.5) os.queueEvent(\'terminate\')") f.close() return shell.openTab("/later.lua")');
    assert.equal(tab.isError, undefined, text(tab));
    await ctx.pc.waitForOutput('mcp-computer stopped.', 30000);
  });
});

describeCraftos('CraftOS-PC: send-input paste in CC\'s character set (background mode)', () => {
  const ctx = useLinkedCraftos({
    id: 18,
    flags: ['--background'],
    post: '',
    files: {
      'got.lua': 'local line = read() local f = fs.open("/got.txt", "wb") f.write(line) f.close()\n',
      'u8.lua': 'print("\\195\\169t\\233")\n',
    },
    ready: ({ bridge }) => untilDone(async () => ({ done: /pong/.test(text(await callTool(bridge, 'probe-computers'))) }), 'the link answers'),
  });
  const gotBytes = async (send) => {
    await callTool(ctx.bridge, 'exec-lua', { computerId: 18, code: 'fs.delete("/got.txt")' });
    const r = await callTool(ctx.bridge, 'send-input', { computerId: 18, text: 'got\n' });
    assert.equal(r.isError, undefined, text(r));
    const sent = await callTool(ctx.bridge, 'send-input', { computerId: 18, ...send });
    if (sent.isError) return { refused: text(sent) };
    await callTool(ctx.bridge, 'send-input', { computerId: 18, keys: ['enter'] });
    const b64 = await untilDone(async () => {
      const f = await callTool(ctx.bridge, 'exec-lua', { computerId: 18, code: 'local f = fs.open("/got.txt", "rb") if not f then return nil end local s = f.readAll() f.close() local t = {} for i = 1, #s do t[i] = s:byte(i) end return t' });
      const v = f.structuredContent.returns[0];
      return { done: v.type === 'table', value: v.value };
    }, 'got.txt written');
    return { bytes: b64 };
  };

  test('bug: a paste went to the program as the UTF-8 bytes of its text ("é" as two characters, "Ã©"), where typed text and a player\'s paste give CC\'s one character per code point', T, async () => {
    assert.deepEqual(await gotBytes({ text: 'é☃x', paste: true }), { bytes: [0xe9, 0x3f, 0x78] });
    // typed text did so already
    assert.deepEqual(await gotBytes({ text: 'é☃x' }), { bytes: [0xe9, 0x3f, 0x78] });
  });

  test('bug: read-screen read two bytes a program printed that happen to be UTF-8 ("\\195\\169", shown by CC as "Ã©") as one character, so the row was shorter than the screen and its columns, colours and cursor no longer lined up', T, async () => {
    const r = await callTool(ctx.bridge, 'send-input', { computerId: 18, text: 'u8\n' });
    assert.equal(r.isError, undefined, text(r));
    const s = await untilDone(async () => {
      const sc = (await callTool(ctx.bridge, 'read-screen', { computerId: 18 })).structuredContent;
      return { done: sc.lines.some((l) => l.includes('t\u00e9')), value: sc };
    }, 'the printed row');
    const row = s.lines.find((l) => l.includes('t\u00e9'));
    assert.equal(row.trimEnd(), '\u00c3\u00a9t\u00e9', 'each byte on the screen is one character, as CC draws it');
    assert.ok(s.lines.every((l) => l.length === s.width), 'every row is as wide as the screen');
    assert.ok(s.foreground.every((l, i) => l.length === s.lines[i].length));
  });
});
