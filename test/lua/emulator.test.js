// cc-emu.lua itself: the behaviour of CC's APIs that the other Lua tests
// rely on, checked against what CC:Tweaked documents (and does), so a green
// run means something.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { useComputer } from './computer.js';
import { startFakeBridge } from './fake-bridge.js';
import { CC_ANSWERS, FS_PATHS_CODE } from './fs-paths.js';
import { describeLua } from './lua-env.js';

const T = { timeout: 30000 };

// Runs `code` (a Lua chunk returning a table of name -> value) inside the
// emulator and returns the values. Strings come back byte-exact (as latin1
// JS strings), errors from pcall-wrapped cases as { error }.
const PROBE = `
local ok, results = pcall(load(CODE, "=probe", "t", _ENV))
local out = fs.open("/results.txt", "w")
if not ok then out.write("!" .. tostring(results)) out.close() return end
local function hex(s) return (s:gsub(".", function(c) return ("%02x"):format(c:byte()) end)) end
for name, v in pairs(results) do
  local kind = type(v)
  local text = kind == "string" and hex(v) or kind == "table" and hex(tostring(v.error)) or tostring(v)
  out.write(name .. " " .. kind .. " " .. text .. "\\n")
end
out.close()`;

async function probe(t, code, opts = {}) {
  const program = PROBE.replace('CODE', `[==[${code}]==]`);
  const c = useComputer(t, { command: 'probe', files: { 'probe.lua': program }, ...opts });
  const { code: exit, output } = await c.waitForExit();
  assert.equal(exit, 0, output);
  const text = readFileSync(path.join(c.root, 'results.txt'), 'latin1');
  if (text.startsWith('!')) throw new Error(text.slice(1));
  const values = {};
  for (const line of text.split('\n').filter(Boolean)) {
    const [name, kind, value = ''] = line.split(' ');
    if (kind === 'string') values[name] = Buffer.from(value, 'hex').toString('latin1');
    else if (kind === 'table') values[name] = { error: Buffer.from(value, 'hex').toString('latin1') };
    else if (kind === 'number') values[name] = Number(value);
    else if (kind === 'boolean') values[name] = value === 'true';
    else values[name] = kind;
  }
  return { values, c };
}

/** Lua source for a pcall returning the value or { error = message }. */
const attempt = (expr) => `(function() local ok, v = pcall(function() return ${expr} end) if ok then return v end return { error = v } end)()`;

describeLua('cc-emu: textutils.serializeJSON as in CC', () => {
  test('tables: empty is {}, arrays, holes as null, nil dropped, mixed keys, markers', T, async (t) => {
    const { values } = await probe(t, `return {
      empty = textutils.serializeJSON({}),
      array = textutils.serializeJSON({ 1, 2, 3 }),
      holes = textutils.serializeJSON({ [1] = 1, [3] = 3 }),
      nilDropped = textutils.serializeJSON({ a = nil, b = true }),
      mixed = textutils.serializeJSON({ 1, 2, x = "y" }),
      nested = textutils.serializeJSON({ list = { "a" } }),
      null = textutils.serializeJSON({ textutils.json_null, x = textutils.json_null }),
      emptyArray = textutils.serializeJSON({ a = textutils.empty_json_array }),
      nbt = textutils.serializeJSON({ a = 1 }, true),
      scalar = textutils.serializeJSON("s"),
    }`);
    assert.equal(values.empty, '{}');
    assert.equal(values.array, '[1,2,3]');
    assert.equal(values.holes, '[1,null,3]');
    assert.equal(values.nilDropped, '{"b":true}');
    assert.equal(values.mixed, '{"x":"y"}', 'numeric keys are dropped when there are string keys');
    assert.equal(values.nested, '{"list":["a"]}');
    assert.equal(values.null, '{"x":null}');
    assert.equal(values.emptyArray, '{"a":[]}');
    assert.equal(values.nbt, '{a:1}');
    assert.equal(values.scalar, '"s"');
  });

  test('nan and inf are written as bare words (invalid JSON)', T, async (t) => {
    const { values } = await probe(t, 'return { v = textutils.serializeJSON({ 0/0, 1/0, -1/0, 0.5 }) }');
    assert.equal(values.v, '[nan,inf,-inf,0.5]');
    assert.throws(() => JSON.parse(values.v));
  });

  test('strings: per-byte \\u00XX escapes by default; unicode_strings reads UTF-8', T, async (t) => {
    const { values } = await probe(t, `return {
      ascii = textutils.serializeJSON("a\\"b\\\\c\\n\\1\\127"),
      bytes = textutils.serializeJSON("é"),
      unicode = textutils.serializeJSON("é☃🐢", { unicode_strings = true }),
      unicodeAscii = textutils.serializeJSON("plain\\t", { unicode_strings = true }),
      invalid = ${attempt('textutils.serializeJSON("\\255", { unicode_strings = true })')},
    }`);
    assert.equal(values.ascii, '"a\\"b\\\\c\\n\\u0001\\u007F"');
    assert.equal(values.bytes, '"\\u00C3\\u00A9"', 'two bytes, two escapes: mojibake on the other side');
    assert.equal(JSON.parse(values.bytes), 'Ã©');
    assert.equal(values.unicode, '"\\u00E9\\u2603\\uD83D\\uDC22"');
    assert.equal(JSON.parse(values.unicode), 'é☃🐢');
    assert.equal(values.unicodeAscii, '"plain\\t"');
    assert.deepEqual(values.invalid, { error: 'invalid UTF-8 code' });
  });

  test('CC before 1.106 takes no options table', T, async (t) => {
    const code = `return { v = ${attempt('textutils.serializeJSON("x", { unicode_strings = true })')} }`;
    const old = await probe(t, code, { oldJson: true });
    assert.match(old.values.v.error, /bad argument #2 \(boolean or nil expected, got table\)/);
    const current = await probe(t, code);
    assert.equal(current.values.v, '"x"');
  });

  test('errors: functions, recursive and repeated tables', T, async (t) => {
    const { values } = await probe(t, `
      local rec = {} rec.self = rec
      local shared = {}
      return {
        fn = ${attempt('textutils.serializeJSON({ f = print })')},
        rec = ${attempt('textutils.serializeJSON(rec)')},
        rep = ${attempt('textutils.serializeJSON({ shared, shared })')},
        repOk = textutils.serializeJSON({ shared, shared }, { allow_repetitions = true }),
      }`);
    assert.deepEqual(values.fn, { error: 'Cannot serialize type function' });
    assert.deepEqual(values.rec, { error: 'Cannot serialize table with recursive entries' });
    assert.deepEqual(values.rep, { error: 'Cannot serialize table with repeated entries' });
    assert.equal(values.repOk, '[{},{}]');
  });
});

describeLua('cc-emu: textutils.unserializeJSON as in CC', () => {
  test('values, null, empty arrays, escapes', T, async (t) => {
    const { values } = await probe(t, `
      local v = textutils.unserializeJSON(' { "a" : [1, 2.5, -3e2, true, false], "s": "x\\\\u00e9\\\\n\\\\ud83d\\\\udc22", "n": null } ')
      return {
        a1 = v.a[1], a2 = v.a[2], a3 = v.a[3], a4 = v.a[4], a5 = v.a[5],
        s = v.s, nIsNil = v.n == nil,
        emptyArray = textutils.unserializeJSON("[]") == textutils.empty_json_array,
        plainEmpty = next(textutils.unserializeJSON("[]", { parse_empty_array = false })) == nil
          and textutils.unserializeJSON("[]", { parse_empty_array = false }) ~= textutils.empty_json_array,
        parseNull = textutils.unserializeJSON("null", { parse_null = true }) == textutils.json_null,
        holes = #textutils.unserializeJSON("[1, null, 3]") .. "",
      }`);
    assert.deepEqual([values.a1, values.a2, values.a3, values.a4, values.a5], [1, 2.5, -300, true, false]);
    // \\u escapes become UTF-8; a surrogate pair becomes two 3-byte sequences (as in CC).
    assert.equal(values.s, `x${Buffer.from('é').toString('latin1')}\n\xed\xa0\xbd\xed\xb0\xa2`);
    assert.equal(values.nIsNil, true);
    assert.equal(values.emptyArray, true);
    assert.equal(values.plainEmpty, true);
    assert.equal(values.parseNull, true);
    assert.match(values.holes, /^[13]$/);
  });

  test('malformed input: nil plus a positioned message (a lone "-" raises)', T, async (t) => {
    const { values } = await probe(t, `
      local function msg(s) local v, err = textutils.unserializeJSON(s) return tostring(v) .. " | " .. tostring(err) end
      return {
        word = msg("hello"),
        trailing = msg('{"a":1} x'),
        unterminated = msg('{"a":'),
        key = msg('{1: 2}'),
        escape = msg('"\\\\q"'),
        empty = msg(""),
        minus = ${attempt('textutils.unserializeJSON("-")')},
      }`);
    assert.equal(values.word, 'nil | Malformed JSON at position 1: Unexpected character "h".');
    assert.equal(values.trailing, 'nil | Malformed JSON at position 9: Unexpected trailing character "x".');
    assert.equal(values.unterminated, 'nil | Malformed JSON at position 6: Unexpected end of input.');
    assert.equal(values.key, 'nil | Malformed JSON at position 2: Unexpected "1", expected object key.');
    assert.equal(values.escape, 'nil | Malformed JSON at position 3: Unknown escape character "q".');
    assert.equal(values.empty, 'nil | Malformed JSON at position 1: Unexpected end of input.');
    assert.ok(typeof values.minus === 'object' && values.minus.error, 'raises instead of returning nil');
  });
});

describeLua('cc-emu: the rest of the computer', () => {
  test('settings: defaults, types, load from and save to /.settings', T, async (t) => {
    const { values, c } = await probe(t, `
      settings.define("x.num", { type = "number", default = 3 })
      local before = settings.get("x.num")
      settings.set("x.num", 4)
      local bad = ${attempt('settings.set("x.num", "four")')}
      settings.save()
      return { before = before, after = settings.get("x.num"), bad = bad, loaded = settings.get("pre.set"),
        fallback = settings.get("missing", "dflt") }`, { settings: { 'pre.set': 'from file' } });
    assert.equal(values.before, 3);
    assert.equal(values.after, 4);
    assert.match(values.bad.error, /bad argument #2 \(number expected, got string\)/);
    assert.equal(values.loaded, 'from file');
    assert.equal(values.fallback, 'dflt');
    assert.match(readFileSync(path.join(c.root, '.settings'), 'utf8'), /\[ "x\.num" \] = 4,/);
  });

  test('fs: rooted in the computer, paths cannot escape it', T, async (t) => {
    const { values } = await probe(t, `
      fs.makeDir("/a/b")
      local f = fs.open("a/b/c.txt", "w") f.write("hi") f.close()
      local r = fs.open("/a/b/c.txt", "r") local text = r.readAll() r.close()
      return { text = text, isDir = fs.isDir("a"), exists = fs.exists("a/b/c.txt"),
        name = fs.getName("a/b/c.txt"), dir = fs.getDir("/a/b/c.txt"), combined = fs.combine("a", "../b", "c"),
        listed = table.concat(fs.list("a/b"), ","), missing = select(2, fs.open("nope", "r")),
        cleaned = fs.combine(" a /./.../b\\\\c:?*", "", "d") }`);
    assert.equal(values.text, 'hi');
    assert.equal(values.isDir, true);
    assert.equal(values.exists, true);
    assert.equal(values.name, 'c.txt');
    assert.equal(values.dir, 'a/b');
    assert.equal(values.combined, 'b/c');
    assert.equal(values.listed, 'c.txt');
    assert.equal(values.missing, '/nope: No such file');
    // FileSystem.sanitizePath: parts trimmed, "." and "..." dropped, "\\" is "/", : ? dropped (* kept by combine)
    assert.equal(values.cleaned, 'a/b/c*/d');
  });

  // CC:Tweaked (FSAPI, FileSystem.sanitizePath/getMount): a path above the root
  // keeps its ".." in combine/getName/getDir, does not exist, and every call
  // that needs its mount says "/<path>: Invalid Path". Nothing escapes the root.
  // The same chunk runs on CraftOS-PC in craftos-files.test.js.
  test('fs: a path above the root is text to combine, does not exist, and is an Invalid Path to use', T, async (t) => {
    const { values, c } = await probe(t, `
      local out = (function() ${FS_PATHS_CODE} end)()
      out.resolved = shell.resolve("../x")
      out.raw = ${attempt('fs.delete("../outside")')}
      out.moveTo = ${attempt('fs.move("probe.lua", "../y")')}
      return out`);
    const { resolved, raw, moveTo, ...answers } = values;
    assert.deepEqual(answers, CC_ANSWERS);
    assert.equal(resolved, '../x');
    // raised at the caller, as CC's Java functions are (the harness's own lines never show)
    for (const [v, p] of [[raw, '/../outside'], [moveTo, '/../y']]) {
      assert.ok(v.error.endsWith(`${p}: Invalid Path`) && !v.error.includes('cc-emu'), v.error);
    }
    assert.ok(existsSync(path.join(c.root, 'probe.lua')), 'the file asked to move above the root is still there');
  });

  test('write wraps words at the width; print and printError; io.write goes through write', T, async (t) => {
    const c = useComputer(t, { command: 'p', size: [10, 3], files: { 'p.lua': 'write("hello wonderful world") print() printError("red") io.write("io", 1, "\\n") print("a", nil, 2)' } });
    const { output } = await c.waitForExit();
    assert.equal(output, 'hello \nwonderful \nworld\nred\nio1\na\tnil\t2\n');
    assert.deepEqual(c.linesIn(16384), ['red']);
  });

  test('term.redirect: missing methods are filled with erroring stubs; current/native', T, async (t) => {
    const { values } = await probe(t, `
      local target = { write = function() end }
      local old = term.redirect(target)
      local isNative = old == term.native()
      local stub = ${attempt('term.getSize()')}
      term.redirect(old)
      return { isNative = isNative, stub = stub, back = term.current() == term.native(),
        self = ${attempt('term.redirect(term)')} }`);
    assert.equal(values.isNative, true);
    assert.match(values.stub.error, /Redirect object is missing method getSize\./);
    assert.equal(values.back, true);
    assert.match(values.self.error, /term is not a recommended redirect target/);
  });

  test('events: queueEvent, pullEvent filters, timers, terminate raises in pullEvent only', T, async (t) => {
    const c = useComputer(t, {
      command: 'p',
      files: {
        'p.lua': `
          os.queueEvent("skip") os.queueEvent("mine", 1, "two", true)
          print(os.pullEvent("mine"))
          local id = os.startTimer(1)
          local _, got = os.pullEvent("timer")
          print("timer", got == id)
          print(os.pullEventRaw())
          print(pcall(os.pullEvent))`,
      },
    });
    await c.waitForOutput('timer\ttrue\n');
    c.terminate();
    await c.waitForOutput('terminate\n');
    c.terminate();
    const { output, code } = await c.waitForExit();
    assert.equal(code, 0);
    assert.equal(output, 'mine\t1\ttwo\ttrue\ntimer\ttrue\nterminate\nfalse\tTerminated\n');
  });

  test('parallel.waitForAny / waitForAll run routines with filters', T, async (t) => {
    const c = useComputer(t, {
      command: 'p',
      files: {
        'p.lua': `
          local order = {}
          local which = parallel.waitForAny(
            function() os.pullEvent("never") end,
            function() os.pullEvent("go") order[#order + 1] = "go" end)
          parallel.waitForAll(
            function() sleep(1) order[#order + 1] = "slept" end,
            function() order[#order + 1] = "quick" end)
          print(which, table.concat(order, ","))
          print(pcall(parallel.waitForAny, function() error("inner", 0) end))`,
      },
    });
    c.queueEvent('go');
    const { output } = await c.waitForExit();
    assert.equal(output, '2\tgo,quick,slept\nfalse\tinner\n');
  });

  test('"Too long without yielding" hits code that never yields, once per resume', T, async (t) => {
    const c = useComputer(t, {
      command: 'p',
      watchdog: 0.2,
      files: { 'p.lua': 'print(pcall(function() while true do end end)) sleep(0) print(pcall(function() local co = coroutine.create(function() while true do end end) return coroutine.resume(co) end))' },
    });
    const { output } = await c.waitForExit();
    // With the position of the running function, as Cobalt's LuaError.fillTraceback adds it
    // (CC's ComputerTest expects "/test.lua:1: Too long without yielding").
    assert.equal(output, 'false\t/p.lua:1: Too long without yielding\ntrue\tfalse\t/p.lua:1: Too long without yielding\n');
  });

  test('globals CC has: unpack, loadstring, loadfile, dofile, require, package, utf8, bit32, bit; lenient term.write', T, async (t) => {
    const c = useComputer(t, {
      command: 'p',
      files: {
        'mod.lua': 'return { x = 5 }',
        'p.lua': [
          'print(unpack({ 1, 2 }))',
          'print(loadstring("return 3")(), loadfile("/mod.lua")().x, dofile("/mod.lua").x, require("mod").x, type(package.loaded))',
          'print(utf8.char(0x1F600) == "\\240\\159\\152\\128", utf8.len("h\\195\\169llo"), utf8.codepoint("\\195\\169"), bit32.band(6, 3), bit.bor(4, 1))',
          'term.write(nil) term.write(true) term.write(1.5) print()',
        ].join('\n'),
      },
    });
    const { code, output } = await c.waitForExit();
    assert.equal(code, 0, output);
    assert.equal(output, '1\t2\n3\t5\t5\t5\ttable\ntrue\t5\t233\t2\t5\nniltrue1.5\n');
  });

  // TermMethods.write takes a Coerced<String>: nil, booleans, numbers and tables are written as
  // their text and nothing raises (the harness's native term checked for a string before).
  test('term.write on the native terminal takes any value, as CC does', T, async (t) => {
    const c = useComputer(t, {
      command: 'p',
      files: { 'p.lua': 'print(pcall(function() term.write(nil) term.write(false) term.write(2) term.write({}) end))' },
    });
    const { code, output } = await c.waitForExit();
    assert.equal(code, 0, output);
    assert.match(output, /^nilfalse2table: 0x[0-9a-f]+true\n$/);
  });

  test('watchdog: code that catches "Too long without yielding" and keeps running is hard-aborted', T, async (t) => {
    const c = useComputer(t, {
      command: 'p',
      watchdog: 0.2,
      hardAbort: 0.2,
      files: { 'p.lua': 'print(pcall(function() while true do end end)) while true do end' },
    });
    const { code, output } = await c.waitForExit();
    assert.equal(code, 3);
    assert.equal(output, 'false\t/p.lua:1: Too long without yielding\nError running computer\nToo long without yielding\nComputerCraft may be installed incorrectly\n');
  });

  // rom/apis/http/http.lua (CC 1.101+) wraps the native websocket function and queues
  // websocket_failure when it fails at once; CC 1.100's http.websocketAsync is the native
  // function itself, which only returns false and the message (--native-async).
  for (const [name, nativeAsync, first] of [['CC 1.101+', false, 'websocket_failure'], ['CC 1.100', true, 'mark']]) {
    test(`http.websocketAsync failing at once (${name}): false, message, and ${first === 'mark' ? 'no event' : 'websocket_failure'}`, T, async (t) => {
      const { values } = await probe(t, `
        local ok, err = http.websocketAsync("ws://example.invalid:1")
        os.queueEvent("mark")
        local ev, url, msg = os.pullEvent()
        return { ok = ok, err = err, first = ev, url = url, msg = msg }`, { syncFailure: 'Unknown host', nativeAsync });
      assert.equal(values.ok, false);
      assert.equal(values.err, 'Unknown host');
      assert.equal(values.first, first);
      if (first === 'websocket_failure') {
        assert.equal(values.url, 'ws://example.invalid:1');
        assert.equal(values.msg, 'Unknown host');
      }
    });
  }

  test('http.websocket: a real socket with send, receive, close and CC\'s limits', T, async (t) => {
    const bridge = await startFakeBridge({ hello: 'none' });
    t.after(() => bridge.close());
    const c = useComputer(t, {
      command: 'p',
      maxMessage: 1000,
      files: {
        'p.lua': `
          local url = ...
          print(http.websocket("http://x"))
          local ws = assert(http.websocket(url))
          ws.send("héllo")
          print("got", ws.receive(5))
          print("timeout", ws.receive(0.1))
          print(pcall(ws.send, ("x"):rep(1001)))
          ws.close()
          print(pcall(ws.send, "late"))`,
      },
      args: [bridge.url],
      timeScale: 0.1,
    });
    const link = await bridge.link(0);
    await link.waitFrame((f) => f.invalidJson === 'héllo');
    link.send('wörld');
    const { code, output } = await c.waitForExit();
    assert.equal(code, 0, output);
    assert.equal(output, [
      "false\tInvalid scheme 'http'",
      'got\twörld\tfalse',
      'timeout',
      'false\tMessage is too large',
      'false\tattempt to use a closed file',
      '',
    ].join('\n'));
    // CC closes the channel without a close frame: the peer sees 1006.
    assert.equal((await link.closed).code, 1006);
  });

  test('the host sees program errors as an error exit, printed in red', T, async (t) => {
    const c = useComputer(t, { command: 'p', files: { 'p.lua': 'error("kaput")' } });
    const { code } = await c.waitForExit();
    assert.equal(code, 1);
    assert.deepEqual(c.linesIn(16384), ['/p.lua:1: kaput']);
  });
});
