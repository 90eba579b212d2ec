// exec-lua on the computer: captured output, returned values, errors,
// bounded answers, chunks running alongside the link, cancel, opt-out.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { COLOURS, linkedOnFakeBridge as linked, okResult as ok } from './computer.js';
import { describeLua } from './lua-env.js';
import { until } from '../helpers.js';

const T = { timeout: 30000 };
// The tests that make the computer spin count CPU time (the emulator's watchdog and os.clock are the
// Lua process's CPU time), so load cannot change what they check; but a starved process takes that
// CPU time slowly (1.7 s of it took 12 s at a load of 10, over 20 s at 30). Their hang guards are
// wall time, so they are generous; what they wait for is a frame, never a time.
const SPIN = { timeout: 120000 };
const GUARD_MS = 100000;

describeLua('exec-lua: output and returned values', () => {
  test('print, write, printError, io.write and term calls are captured in order', T, async (t) => {
    const { c, link } = await linked(t);
    const before = c.output;
    const result = ok(await link.exec([
      'print("one", 2, nil)',
      'write("two ")',
      'io.write("three", 4, "\\n")',
      'printError("four")',
      'term.write("five")',
      'local x, y = term.getCursorPos()',
      'term.setCursorPos(1, y + 1)',
      'term.write("six")',
      'term.scroll(1)',
      'term.blit("seven", "00000", "fffff")', // scroll kept the column, as on screen
      'print()',
      'print()',
      'print("end")',
    ].join('\n')));
    assert.equal(result.output, 'one\t2\tnil\ntwo three4\nfour\nfive\nsix\n   seven\n\nend\n');
    assert.deepEqual(result.returns, []);
    assert.equal(result.truncated, false);
    assert.equal(c.output, before, 'nothing reached the real screen');
  });

  test('output reads like the screen: long lines wrap at the screen width', T, async (t) => {
    const { link } = await linked(t, { size: [20, 5] });
    const result = ok(await link.exec('for i = 1, 8 do print("line " .. i) end print("a fairly long sentence that wraps")'));
    assert.equal(result.output, 'line 1\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8\na fairly long \nsentence that wraps\n');
    // (CC's write puts the space down before wrapping the next word.)
  });

  test('the capture terminal has the whole term API', T, async (t) => {
    const { link } = await linked(t);
    const code = `
      local t = term.current()
      local names = { "write", "blit", "clear", "clearLine", "getCursorPos", "setCursorPos",
        "setCursorBlink", "getCursorBlink", "isColour", "isColor", "getSize", "scroll",
        "setTextColour", "setTextColor", "getTextColour", "getTextColor",
        "setBackgroundColour", "setBackgroundColor", "getBackgroundColour", "getBackgroundColor",
        "getPaletteColour", "getPaletteColor", "setPaletteColour", "setPaletteColor", "nativePaletteColour" }
      local missing = {}
      for _, n in ipairs(names) do if type(t[n]) ~= "function" then missing[#missing + 1] = n end end
      term.setTextColour(colours.lime)
      term.setBackgroundColor(colors.blue)
      term.setPaletteColour(colours.red, 0xFF0000)
      term.setCursorBlink(true)
      local r = term.getPaletteColour(colours.red)
      return t ~= term.native(), missing, term.getTextColour(), term.getBackgroundColour(), r, term.getCursorBlink(), term.isColour()`;
    const { returns } = ok(await link.exec(code));
    assert.deepEqual(returns.map((d) => d.value), [true, {}, 32, 2048, 1, true, true]);
  });

  test('return 1, nil, 3 gives three descriptors, nil included', T, async (t) => {
    const { link } = await linked(t);
    const { returns } = ok(await link.exec('return 1, nil, 3'));
    assert.deepEqual(returns, [{ type: 'number', value: 1 }, { type: 'nil' }, { type: 'number', value: 3 }]);
    const trailing = ok(await link.exec('return nil, nil'));
    assert.deepEqual(trailing.returns, [{ type: 'nil' }, { type: 'nil' }]);
  });

  test('each kind of value has its descriptor', T, async (t) => {
    const { link } = await linked(t);
    const { returns } = ok(await link.exec(
      'return true, false, -2.5, 2^53, "text", 0/0, 1/0, -1/0, print, coroutine.create(print)',
    ));
    assert.deepEqual(returns.slice(0, 8), [
      { type: 'boolean', value: true },
      { type: 'boolean', value: false },
      { type: 'number', value: -2.5 },
      { type: 'number', value: 2 ** 53 },
      { type: 'string', value: 'text' },
      { type: 'number', repr: 'nan' },
      { type: 'number', repr: 'inf' },
      { type: 'number', repr: '-inf' },
    ]);
    assert.equal(returns[8].type, 'function');
    assert.match(returns[8].repr, /^function: /);
    assert.equal(returns[9].type, 'thread');
    assert.match(returns[9].repr, /^thread: /);
    assert.ok(!('value' in returns[5]));
  });

  test('tables: arrays stay arrays, keys become strings, cycles and repeats are marked', T, async (t) => {
    const { link } = await linked(t);
    const { returns } = ok(await link.exec(`
      local shared = { 1 }
      local t = { list = { 10, 20, 30 }, holes = { 1, nil, 3 }, [5] = "five", [true] = "yes",
        nested = { deep = { deeper = "x" } }, a = shared, b = shared, fn = print, bad = 0/0, empty = {} }
      t.self = t
      return t, { "only", "array" }`));
    const [t0, t1] = returns;
    assert.equal(t0.type, 'table');
    const v = t0.value;
    assert.deepEqual(v.list, [10, 20, 30]);
    assert.deepEqual(v.holes, [1, null, 3]);
    assert.equal(v['5'], 'five');
    assert.equal(v.true, 'yes');
    assert.deepEqual(v.nested, { deep: { deeper: 'x' } });
    assert.deepEqual([v.a, v.b].sort(), [[1], '<repeated>'].sort());
    assert.match(v.fn, /^function: /);
    assert.equal(v.bad, 'nan');
    assert.deepEqual(v.empty, {});
    assert.equal(v.self, '<cycle>');
    assert.ok(!t0.truncated);
    assert.deepEqual(t1, { type: 'table', value: ['only', 'array'] });
  });

  test('deep tables stop at the depth limit and say so', T, async (t) => {
    const { link } = await linked(t);
    const { returns } = ok(await link.exec('local t = {} local cur = t for i = 1, 40 do cur.next = {} cur = cur.next end return t'));
    let node = returns[0].value;
    let depth = 0;
    while (typeof node === 'object') {
      node = node.next;
      depth += 1;
    }
    assert.equal(node, '<depth limit>');
    assert.equal(depth, 16);
    assert.equal(returns[0].truncated, true);
  });

  test('non-ASCII output and strings survive as real UTF-8', T, async (t) => {
    const { link } = await linked(t);
    const res = await link.exec('print("héllo ☃ 🐢") return "Grüße 🐢", { ["ключ"] = "значение" }');
    const result = ok(res);
    assert.equal(result.output, 'héllo ☃ 🐢\n');
    assert.deepEqual(result.returns, [{ type: 'string', value: 'Grüße 🐢' }, { type: 'table', value: { ключ: 'значение' } }]);
    // An escaped surrogate pair in the code reaches Lua (through CC's JSON
    // decoder) as two 3-byte sequences; it still comes back as one emoji.
    link.send('{"type":"request","id":"esc","method":"exec-lua","params":{"code":"return \\"\\ud83d\\udc22\\""}}');
    const esc = await link.waitFrame((f) => f.id === 'esc');
    assert.deepEqual(ok(esc).returns, [{ type: 'string', value: '🐢' }]);
    // ...and inside the chunk it is the real 4 UTF-8 bytes, in code and in data
    // (issue 14 finding 3: CC decodes each \u escape alone, giving 6 bytes).
    link.send('{"type":"request","id":"len","method":"exec-lua","params":{"code":"local t = ... return #\\"\\ud83d\\udc22\\", #t.s, t[\\"k\\ud83d\\ude00\\"]","args":{"s":"\\ud83d\\ude00","k\\ud83d\\ude00":true}}}');
    const len = await link.waitFrame((f) => f.id === 'len');
    assert.deepEqual(ok(len).returns, [{ type: 'number', value: 4 }, { type: 'number', value: 4 }, { type: 'boolean', value: true }]);
    // A returned string that is not UTF-8 comes as its exact bytes in base64
    // (issue 14 finding 4); inside a table the copy shows it as a Lua literal body and
    // the table's bytes list carries its exact bytes.
    const bytes = ok(await link.exec('return "a\\255b\\128", { "a\\255b\\128" }'));
    const exactBytes = Buffer.from([0x61, 0xff, 0x62, 0x80]).toString('base64');
    assert.deepEqual(bytes.returns, [
      { type: 'string', base64: exactBytes },
      { type: 'table', value: ['a\\255b\\128'], bytes: [{ path: [0], base64: exactBytes }] },
    ]);
    assert.ok(link.raw.every((text) => /^[\x20-\x7e]*$/.test(text)));
  });

  test('term.write takes any value, as in CC (nil, booleans, tables)', T, async (t) => {
    const { link } = await linked(t);
    const result = ok(await link.exec('term.write(nil) term.write(true) term.write(2) local x = term.getCursorPos() return x'));
    assert.equal(result.output, 'niltrue2');
    assert.deepEqual(result.returns, [{ type: 'number', value: 9 }]);
  });

  test('no paging under capture, and read() fails at once (CC would wait for keys no one presses)', T, async (t) => {
    const { c, link } = await linked(t);
    const paged = ok(await link.exec('textutils.pagedPrint(("line\\n"):rep(60)) return "done"', 5000));
    assert.equal(paged.output, 'line\n'.repeat(60) + '\n');
    assert.deepEqual(paged.returns, [{ type: 'string', value: 'done' }]);
    const read = await link.exec('print("asking") return read()', 5000);
    assert.equal(read.ok, false);
    assert.match(read.error, /read\(\) has no input here/);
    assert.equal(read.result.output, 'asking\n');
    // read is given back to programs once the chunk is not running
    assert.deepEqual(ok(await link.exec('return read == _G.read, read ~= nil')).returns.map((d) => d.value), [true, true]);
    assert.match(c.output, /waiting/);
  });

  test('each chunk has its own globals; program-level names like shell are there', T, async (t) => {
    const { link } = await linked(t);
    ok(await link.exec('x = 5 return x'));
    const { returns } = ok(await link.exec('return x, type(shell), type(textutils.serializeJSON)'));
    assert.deepEqual(returns, [{ type: 'nil' }, { type: 'string', value: 'table' }, { type: 'string', value: 'function' }]);
  });
});

describeLua('exec-lua: errors', () => {
  test('syntax error: compiler message with line, empty result', T, async (t) => {
    const { link } = await linked(t);
    const res = await link.exec('local a = 1\nlocal = 2');
    assert.equal(res.ok, false);
    assert.match(res.error, /^exec-lua:2: /);
    assert.deepEqual(res.result, { output: '', returns: [], truncated: false });
  });

  test('runtime error: message with position, output captured before it kept', T, async (t) => {
    const { link } = await linked(t);
    const res = await link.exec('print("step 1")\nlocal t = nil\nreturn t.x');
    assert.equal(res.ok, false);
    assert.match(res.error, /^exec-lua:3: attempt to index local 't' \(a nil value\)$/);
    assert.deepEqual(res.result, { output: 'step 1\n', returns: [], truncated: false });
  });

  test('error values that are not strings, and error() without one', T, async (t) => {
    const { link } = await linked(t);
    const table = await link.exec('error({ code = 1 })');
    assert.match(table.error, /^table: /);
    const none = await link.exec('error()');
    assert.equal(none.error, 'error (no message)');
    const tostringed = await link.exec('error(setmetatable({}, { __tostring = function() return "custom" end }))');
    assert.equal(tostringed.error, 'custom');
  });

  test('bug: an error object whose __tostring gave back a table got no answer at all (the program failed building it)', T, async (t) => {
    const { c, link } = await linked(t);
    const res = await link.exec('error(setmetatable({}, { __tostring = function() return {} end }))');
    assert.equal(res.ok, false, JSON.stringify(res));
    assert.equal(res.error, 'error object of type table');
    const job = await link.request('exec-lua', { code: 'error(setmetatable({}, { __tostring = function() return {} end }))', detach: true });
    const state = await until(async () => {
      const s = await link.request('job-status', { job: job.result.job });
      return s.result.state !== 'running' && s.result;
    });
    assert.equal(state.error, 'error object of type table', JSON.stringify(state));
    assert.doesNotMatch(c.output, /internal error/);
    assert.equal((await link.request('ping')).ok, true);
  });

  test('bug: a chunk queueing more events than CC\'s queue holds between its yields (a flood loop) ran on unanswered while CC dropped the link\'s frames (its cancel, later requests)', T, async (t) => {
    const { link } = await linked(t);
    const res = await link.exec('local n = 0 while true do for i = 1, 300 do os.queueEvent("x") end n = n + 1 os.pullEvent("x") end');
    assert.equal(res.ok, false, JSON.stringify(res));
    assert.match(res.error, /^exec-lua:1: os\.queueEvent: more than 256 events queued without a yield; CC's event queue holds 256 and silently drops the rest/);
    assert.equal((await link.request('ping')).ok, true);
    // 256 in one go is what CC holds: allowed, and all of them come back
    assert.deepEqual(ok(await link.exec('for i = 1, 250 do os.queueEvent("y", i) end local n = 0 while n < 250 do os.pullEvent("y") n = n + 1 end return n')).returns, [{ type: 'number', value: 250 }]);
  });

  test('"Too long without yielding" is reported as such and the link carries on', SPIN, async (t) => {
    const { c, link } = await linked(t, { watchdog: 0.3 });
    const res = await link.exec('print("spinning") while true do end', GUARD_MS);
    assert.equal(res.ok, false);
    assert.match(res.error, /^Too long without yielding: the chunk ran for about 7 s without yielding, so CC stopped it/);
    assert.equal(res.result.output, 'spinning\n');
    assert.equal((await link.request('ping')).ok, true);
    // The terminal was given back: the program's own lines reach the screen.
    c.terminate();
    assert.match((await c.waitForExit()).output, /mcp-computer stopped\.\n$/);
  });

  test('watchdog: the chunks after the one it stopped get the event in a fresh resume, not a hard abort', SPIN, async (t) => {
    // CC (TimeoutState): one 7 s budget for everything resumed for an event,
    // then 1.5 s until the computer is shut down. Here: 0.5 s, then 0.4 s;
    // each chunk spins 70% of the budget (about 0.85 s of CPU time in all).
    const { link } = await linked(t, { watchdog: 0.5, hardAbort: 0.4 });
    const spin = (name, pre = '') => `${pre} os.pullEvent("go") local t = os.clock() while os.clock() - t < 0.35 do end return "${name}"`;
    const ids = ['a', 'b', 'c'];
    link.send({ type: 'request', id: 'a', method: 'exec-lua', params: { code: spin('A') } });
    link.send({ type: 'request', id: 'b', method: 'exec-lua', params: { code: spin('B') } });
    link.send({ type: 'request', id: 'c', method: 'exec-lua', params: { code: spin('C', 'os.queueEvent("go")') } });
    const [a, b, c] = await Promise.all(ids.map((id) => link.waitFrame((f) => f.type === 'response' && f.id === id, GUARD_MS)));
    assert.deepEqual(ok(a).returns, [{ type: 'string', value: 'A' }]);
    // B was stopped while A's share of the 7 s was spent: it is not blamed for all of it
    assert.equal(b.ok, false);
    assert.match(b.error, /^Too long without yielding: CC's limit of about 7 s for one event ran out while this chunk ran, but it ran only \d+% of that time/);
    assert.deepEqual(ok(c).returns, [{ type: 'string', value: 'C' }]);
    assert.equal((await link.request('ping')).ok, true);
  });

  test('bug: CC\'s watchdog stopping an error object\'s __tostring was swallowed, so the chunks after it ran on in the same resume and CC\'s hard abort shut the computer down', T, async (t) => {
    // CC: 7 s for everything resumed for one event, then 1.5 s to yield. Here: 1 s, then 0.4 s.
    const { link } = await linked(t, { watchdog: 1, hardAbort: 0.4 });
    link.send({ type: 'request', id: 'a', method: 'exec-lua', params: { code: 'os.pullEvent("go") error(setmetatable({}, { __tostring = function() while true do end end }))' } });
    link.send({ type: 'request', id: 'b', method: 'exec-lua', params: { code: 'os.pullEvent("go") local t = os.clock() while os.clock() - t < 0.7 do end return "B"' } });
    link.send({ type: 'request', id: 'c', method: 'exec-lua', params: { code: 'os.queueEvent("go")' } });
    const [a, b] = await Promise.all(['a', 'b'].map((id) => link.waitFrame((f) => f.type === 'response' && f.id === id, 20000)));
    assert.equal(a.ok, false);
    assert.match(a.error, /^error object of type table \(its __tostring ran until CC's limit of about 7 s/);
    assert.deepEqual(ok(b).returns, [{ type: 'string', value: 'B' }], 'B ran in a resume of its own');
    assert.equal((await link.request('ping')).ok, true);
  });

  test('the terminal is restored after a failing chunk', T, async (t) => {
    const { c, link } = await linked(t);
    await link.exec('term.setTextColour(colours.red) print("in chunk") error("x")');
    link.send('not json');
    await c.waitForOutput('warning: ignored a malformed frame');
    assert.doesNotMatch(c.output, /in chunk/);
    assert.ok(c.linesIn(COLOURS.yellow).some((l) => l.startsWith('warning:')));
  });
});

describeLua('exec-lua: a chunk\'s own terminate', () => {
  test('bug: os.queueEvent("terminate") in a chunk stopped mcp-computer (foreground); now it ends that chunk alone with "Terminated", and Ctrl+T still stops the program', T, async (t) => {
    const { c, link } = await linked(t);
    // a detached job running alongside, waiting for an event: it must not be ended by another chunk's terminate
    const job = await link.request('exec-lua', { code: 'os.pullEvent("mcp_test_go") return "job done"', detach: true });
    assert.equal(job.ok, true, JSON.stringify(job));
    const res = await link.exec('print("before") os.queueEvent("terminate") os.pullEvent() return "not reached"');
    assert.equal(res.ok, false, JSON.stringify(res));
    assert.equal(res.error, 'Terminated');
    assert.equal(res.result.output, 'before\n');
    // it passes a filter, as CC's terminate does
    const slept = await link.exec('os.queueEvent("terminate") sleep(30)');
    assert.equal(slept.error, 'Terminated');
    // os.pullEventRaw gets it as an event
    assert.deepEqual(ok(await link.exec('os.queueEvent("terminate") return os.pullEventRaw()')).returns, [{ type: 'string', value: 'terminate' }]);
    assert.equal((await link.request('ping')).ok, true, 'the link goes on');
    const still = await link.request('job-status', { job: job.result.job });
    assert.equal(still.result.state, 'running', JSON.stringify(still));
    assert.doesNotMatch(c.output, /mcp-computer stopped/);
    // the player's Ctrl+T (a terminate no chunk queued) still stops the program
    c.terminate();
    assert.match((await c.waitForExit()).output, /mcp-computer stopped\.\n$/);
  });
});

describeLua('exec-lua: a terminate queued by a chunk\'s metamethods while its answer is built', () => {
  test('bug: a returned key\'s or an error object\'s __tostring queueing terminate (run while the answer was built, after the chunk\'s last resume) stopped mcp-computer', T, async (t) => {
    const { c, link } = await linked(t);
    const key = ok(await link.exec('return {[setmetatable({}, {__tostring = function() os.queueEvent("terminate") return "k" end})] = 1}'));
    assert.deepEqual(key.returns, [{ type: 'table', value: { k: 1 } }]);
    const err = await link.exec('error(setmetatable({}, {__tostring = function() os.queueEvent("terminate") return "e" end}))');
    assert.equal(err.error, 'e');
    assert.equal((await link.request('ping')).ok, true);
    assert.doesNotMatch(c.output, /mcp-computer stopped/);
  });

  test('bug: a detached job\'s returned key whose __tostring failed or queued terminate left the job done with no result (an internal error on the screen), or stopped mcp-computer', T, async (t) => {
    const { c, link } = await linked(t);
    const finished = async (code) => {
      const job = await link.request('exec-lua', { code, detach: true });
      assert.equal(job.ok, true, JSON.stringify(job));
      for (let i = 0; i < 400; i++) {
        const s = await link.request('job-status', { job: job.result.job });
        if (s.result.state !== 'running') return s.result;
        await new Promise((r) => setTimeout(r, 10));
      }
      throw new Error('the job never finished');
    };
    const failed = await finished('return {[setmetatable({}, {__tostring = function() error("k", 0) end})] = 1}');
    assert.equal(failed.state, 'failed', JSON.stringify(failed));
    assert.equal(failed.error, 'could not describe the returned values: k');
    const kept = await finished('return {[setmetatable({}, {__tostring = function() os.queueEvent("terminate") return "k" end})] = 1}');
    assert.equal(kept.state, 'done', JSON.stringify(kept));
    assert.deepEqual(kept.returns, [{ type: 'table', value: { k: 1 } }]);
    assert.equal((await link.request('ping')).ok, true);
    assert.doesNotMatch(c.output, /internal error|mcp-computer stopped/);
  });
});

describeLua('exec-lua: a chunk\'s own terminate through an os.queueEvent kept from another chunk', () => {
  test('bug: os.queueEvent kept by one chunk (a global, an API it loaded) and called from a later chunk sent that later chunk\'s terminate to the first, finished one: it was lost and the later chunk waited on', T, async (t) => {
    const { link } = await linked(t);
    ok(await link.exec('_G.keptQueue = os.queueEvent'));
    const res = await link.exec('keptQueue("terminate") os.pullEvent() return "not reached"');
    assert.equal(res.ok, false, JSON.stringify(res));
    assert.equal(res.error, 'Terminated');
    // other events still go through it
    assert.deepEqual(ok(await link.exec('keptQueue("mine", 7) local _, n = os.pullEvent("mine") return n')).returns, [{ type: 'number', value: 7 }]);
    assert.equal((await link.request('ping')).ok, true);
  });
});

describeLua('exec-lua: answers stay under the frame limit', () => {
  test('huge output is cut to fit 128 KiB (minus margin) and still delivered', SPIN, async (t) => {
    const { link } = await linked(t);
    const res = await link.exec('for i = 1, 20000 do print(("line %05d "):format(i) .. ("x"):rep(20)) end return "after"', GUARD_MS);
    const raw = link.raw[link.raw.length - 1];
    assert.ok(Buffer.byteLength(raw) <= 131072 - 4096, `frame is ${raw.length} bytes`);
    assert.ok(Buffer.byteLength(raw) > 100000, 'the room is used');
    const result = ok(res);
    assert.equal(result.truncated, true);
    assert.match(result.output, /^line 00001 x{20}\nline 00002 /);
    assert.deepEqual(result.returns, [{ type: 'string', value: 'after' }]);
  });

  test('huge return values are cut; one descriptor per value is kept', SPIN, async (t) => {
    const { link } = await linked(t, { args: ['--max-frame', '8192'] });
    const res = await link.exec('local t = {} for i = 1, 5000 do t[i] = { i, "item " .. i } end return ("é"):rep(10000), t, 42', GUARD_MS);
    const raw = link.raw[link.raw.length - 1];
    assert.ok(Buffer.byteLength(raw) <= 8192 - 1024, `frame is ${raw.length} bytes`);
    const result = ok(res);
    assert.equal(result.truncated, true);
    assert.equal(result.returns.length, 3);
    const [s, tbl, n] = result.returns;
    assert.equal(s.type, 'string');
    assert.equal(s.truncated, true);
    assert.match(s.value, /^(é)+$/, 'cut on a character boundary');
    assert.equal(tbl.type, 'table');
    assert.equal(tbl.truncated, true);
    assert.deepEqual(n, { type: 'number', value: 42 });
  });

  test('output with many escapes is measured after escaping', T, async (t) => {
    const { link } = await linked(t, { args: ['--max-frame', '4096'] });
    const res = await link.exec('for i = 1, 2000 do write("\\1\\2\\"") end');
    const raw = link.raw[link.raw.length - 1];
    assert.ok(Buffer.byteLength(raw) <= 4096 - 512, `frame is ${raw.length} bytes`);
    const result = ok(res);
    assert.equal(result.truncated, true);
    const text = result.output.replace(/\n/g, ''); // write wrapped it at the screen width
    assert.ok(text.length > 300);
    assert.ok('\u0001\u0002"'.repeat(2000).startsWith(text));
  });

  test('a server limit smaller than --max-frame: an error answer instead of nothing', T, async (t) => {
    const { link } = await linked(t, { maxMessage: 16384 });
    const res = await link.exec('print(("y"):rep(60000)) return 1');
    assert.equal(res.ok, false);
    assert.match(res.error, /larger than this server's websocket message limit; run mcp-computer with a smaller --max-frame/);
    assert.equal(res.result.truncated, true);
    assert.equal((await link.request('ping')).ok, true);
  });

  test('long error messages are cut', T, async (t) => {
    const { link } = await linked(t);
    const res = await link.exec('error(("e"):rep(100000), 0)');
    assert.equal(res.ok, false);
    assert.ok(res.error.length <= 2048 + 3);
    assert.match(res.error, /^e+\.\.\.$/);
  });
});

describeLua('exec-lua: chunks run alongside the link', () => {
  test('a chunk waiting in os.pullEvent does not block ping; events reach it', T, async (t) => {
    const { c, link } = await linked(t);
    link.send({ type: 'request', id: 'waiter', method: 'exec-lua', params: { code: 'print("waiting") local _, v = os.pullEvent("go") print("got", v) return v' } });
    for (let i = 0; i < 3; i += 1) assert.equal((await link.request('ping')).ok, true);
    assert.ok(!link.frames.some((f) => f.id === 'waiter'));
    c.queueEvent('other', 'ignored');
    c.queueEvent('go', 'green');
    const res = await link.waitFrame((f) => f.id === 'waiter');
    assert.deepEqual(ok(res), { output: 'waiting\ngot\tgreen\n', returns: [{ type: 'string', value: 'green' }], truncated: false });
  });

  test('sleep inside a chunk; other requests answered meanwhile', T, async (t) => {
    const { link } = await linked(t, { timeScale: 0.05 });
    link.send({ type: 'request', id: 'sleeper', method: 'exec-lua', params: { code: 'sleep(2) return "slept"' } });
    assert.equal((await link.request('ping')).ok, true);
    const res = await link.waitFrame((f) => f.id === 'sleeper');
    assert.deepEqual(ok(res).returns, [{ type: 'string', value: 'slept' }]);
  });

  test('several chunks at once, finishing in any order, filters respected', T, async (t) => {
    const { c, link } = await linked(t);
    const start = (id, code) => link.send({ type: 'request', id, method: 'exec-lua', params: { code } });
    start('a', 'local e, v = os.pullEvent("a") return v');
    start('b', 'local e, v = os.pullEvent("b") return v');
    start('any', 'local e = os.pullEvent() return e');
    await link.request('ping');
    c.queueEvent('b', 'bee');
    const first = await link.waitFrame((f) => f.id === 'b');
    assert.deepEqual(ok(first).returns, [{ type: 'string', value: 'bee' }]);
    const any = await link.waitFrame((f) => f.id === 'any');
    assert.deepEqual(ok(any).returns, [{ type: 'string', value: 'b' }], 'a chunk without a filter gets any event');
    assert.ok(!link.frames.some((f) => f.id === 'a'));
    c.queueEvent('a', 'ay');
    assert.deepEqual(ok(await link.waitFrame((f) => f.id === 'a')).returns, [{ type: 'string', value: 'ay' }]);
  });

  test('a chunk can run its own coroutines with parallel', T, async (t) => {
    const { c, link } = await linked(t);
    link.send({ type: 'request', id: 'par', method: 'exec-lua', params: { code: `
      local got = {}
      parallel.waitForAll(
        function() sleep(0.5) got[#got + 1] = "slept" end,
        function() local _, v = os.pullEvent("poke") got[#got + 1] = v end)
      return table.concat(got, ",")` } });
    await link.request('ping');
    c.queueEvent('poke', 'poked');
    const res = await link.waitFrame((f) => f.id === 'par');
    assert.match(ok(res).returns[0].value, /^(poked,slept|slept,poked)$/);
  });

  test('the link\'s own websocket events never reach a chunk', T, async (t) => {
    const { c, link } = await linked(t);
    link.send({ type: 'request', id: 'listener', method: 'exec-lua', params: { code: 'local e = os.pullEvent() return e' } });
    await link.request('ping');
    await link.request('ping');
    c.queueEvent('custom');
    const res = await link.waitFrame((f) => f.id === 'listener');
    assert.deepEqual(ok(res).returns, [{ type: 'string', value: 'custom' }]);
  });

  test('bug: mcp-computer\'s own identity-check timer reached a chunk\'s bare os.pullEvent() as a timer it never started', T, async (t) => {
    // the 2 s identity check runs every 20 ms here; counting its starts shows it fired while the chunk waited
    let checks = 0;
    const timerMs = (s) => (s === 2 ? (checks++, 20) : s * 1000);
    const { c, link } = await linked(t, { timerMs });
    link.send({ type: 'request', id: 'listener', method: 'exec-lua', params: { code: 'local e, id = os.pullEvent() return e, id' } });
    await link.request('ping');
    const started = checks;
    await until(() => checks >= started + 3);
    c.queueEvent('custom', 'from-test');
    const res = await link.waitFrame((f) => f.id === 'listener');
    assert.deepEqual(ok(res).returns, [{ type: 'string', value: 'custom' }, { type: 'string', value: 'from-test' }]);
  });

  test('a chunk\'s own timers still reach it, beside mcp-computer\'s', T, async (t) => {
    const timerMs = (s) => (s === 2 ? 20 : s * 1000);
    const { link } = await linked(t, { timerMs });
    const res = await link.request('exec-lua', { code: 'local mine = os.startTimer(0.3) local e, id = os.pullEvent() return e, id == mine' });
    assert.deepEqual(ok(res).returns, [{ type: 'string', value: 'timer' }, { type: 'boolean', value: true }]);
  });
});

describeLua('exec-lua: cancel', () => {
  const code = 'os.pullEvent("go") local f = fs.open("/after.txt", "w") f.write("ran") f.close() print("after") return 1';

  test('without cancel the chunk runs on after its event (control)', T, async (t) => {
    const { c, link } = await linked(t);
    link.send({ type: 'request', id: 'job', method: 'exec-lua', params: { code } });
    await link.request('ping');
    c.queueEvent('go');
    await link.waitFrame((f) => f.id === 'job');
    assert.ok(existsSync(path.join(c.root, 'after.txt')));
  });

  test('cancel: never resumed again, nothing sent for it', T, async (t) => {
    const { c, link } = await linked(t);
    link.send({ type: 'request', id: 'job', method: 'exec-lua', params: { code } });
    await link.request('ping');
    link.send({ type: 'cancel', id: 'job' });
    await c.waitForOutput('cancelled exec-lua job');
    c.queueEvent('go');
    // Events are handled in order: once this ping is answered, "go" was seen.
    await link.request('ping');
    assert.ok(!existsSync(path.join(c.root, 'after.txt')));
    assert.ok(!link.frames.some((f) => f.id === 'job'));
  });

  test('bug (harness): the link the tests got was the first connection even when the computer had given up its hello there (5 s are 50 ms here) and linked on a second, so the test\'s first request failed with "link closed (1006)"', T, async (t) => {
    let first = true;
    const hello = (l) => {
      if (first) {
        first = false;
        setTimeout(() => l.send({ type: 'hello-ok' }), 1000); // a loaded machine: hello-ok comes late
      } else {
        l.send({ type: 'hello-ok' });
      }
    };
    const { c, bridge, link } = await linked(t, { hello });
    assert.match(c.output, /no hello-ok from the bridge within 5 s/);
    assert.equal(bridge.links.length, 2);
    assert.equal((await link.request('ping')).ok, true);
  });

  test('harness: liveLink skips a connection the computer gave up its hello on (background mode prints no "waiting for requests")', T, async (t) => {
    let first = true;
    const hello = (l) => {
      if (first) {
        first = false;
        setTimeout(() => l.send({ type: 'hello-ok' }), 1000);
      } else {
        l.send({ type: 'hello-ok' });
      }
    };
    const { bridge } = await linked(t, { hello });
    const link = await bridge.liveLink();
    assert.equal(link, bridge.links[1]);
  });

  test('cancel of an unknown id is ignored', T, async (t) => {
    const { c, link } = await linked(t);
    link.send({ type: 'cancel', id: 'nobody' });
    link.send({ type: 'cancel' });
    assert.equal((await link.request('ping')).ok, true);
    assert.doesNotMatch(c.output, /warning|cancelled/);
  });
});

describeLua('exec-lua: opt-out', () => {
  for (const [name, opts] of [
    ['--no-exec', { args: ['--no-exec'] }],
    ['mcp.exec = false', { settings: { 'mcp.exec': false } }],
  ]) {
    test(`${name}: exec-lua is refused, ping still works`, T, async (t) => {
      const { c, link } = await linked(t, opts);
      const res = await link.exec('fs.open("/ran.txt", "w").close() return 1');
      assert.deepEqual(res, {
        type: 'response', id: res.id, ok: false, error: 'exec-lua is disabled on this computer',
        result: { output: '', returns: [], truncated: false },
      });
      assert.ok(!existsSync(path.join(c.root, 'ran.txt')));
      assert.equal((await link.request('ping')).ok, true);
    });
  }

  test('exec-lua without params.code is refused', T, async (t) => {
    const { link } = await linked(t);
    const res = await link.request('exec-lua', { source: 'return 1' });
    assert.equal(res.ok, false);
    assert.equal(res.error, 'exec-lua needs params.code (a string of Lua)');
  });
});
