// Issue 14, finding 2: big answers are capped before they are encoded and the
// encoder yields during long work, so CC's watchdog never fires on it and the
// bridge always gets an answer. The harness watchdog is CC's (TimeoutState:
// time per resume, then a hard abort), shortened here so the old encoder,
// which encoded everything before cutting it, trips it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { linkedOnFakeBridge as linked } from './computer.js';
import { describeLua } from './lua-env.js';
import { exact, expected, NESTED_CODE, NESTED_EXPECTED } from './exact.js';

const T = { timeout: 180000 }; // wall time on a loaded machine; the watchdog counts CPU time

/** The answer to `code` and the bytes of its frame; fails if none comes within `waitMs`. */
async function answer(link, code, waitMs = 90000) {
  const res = await link.exec(code, waitMs);
  const raw = link.raw.find((r) => r.includes(`"id":"${res.id}"`) && r.includes('"type":"response"'));
  return { res, size: Buffer.byteLength(raw ?? '') };
}

const BUDGET = 131072 - 4096;

describeLua('exec-lua: big answers are capped before encoding (issue 14, finding 2)', () => {
  // With lua5.2 on a fast machine the old encoder took about 37 s for this.
  test('10,000 returned strings of 4 KiB: an answer within the frame limit, marked truncated', T, async (t) => {
    const { link } = await linked(t, { watchdog: 1, hardAbort: 1 });
    const { res, size } = await answer(link, 'local t, s = {}, ("x"):rep(4096) for i = 1, 10000 do t[i] = s .. i end return table.unpack(t)');
    assert.equal(res.ok, true, JSON.stringify(res).slice(0, 300));
    assert.ok(size <= BUDGET, `frame is ${size} bytes`);
    assert.equal(res.result.truncated, true);
    // One descriptor per value for as many values as fit (most without their text).
    assert.ok(res.result.returns.length > 1000, `${res.result.returns.length} values listed`);
    for (const d of res.result.returns) {
      assert.equal(d.type, 'string');
      assert.equal(d.truncated, true);
    }
    assert.equal((await link.request('ping')).ok, true);
  });

  test('one table of 10,000 strings of 4 KiB', T, async (t) => {
    const { link } = await linked(t, { watchdog: 1, hardAbort: 1 });
    const { res, size } = await answer(link, 'local t, s = {}, ("x"):rep(4096) for i = 1, 10000 do t[i] = s .. i end return t, "after"');
    assert.equal(res.ok, true, JSON.stringify(res).slice(0, 300));
    assert.ok(size <= BUDGET, `frame is ${size} bytes`);
    assert.equal(res.result.truncated, true);
    const [tbl, after] = res.result.returns;
    assert.equal(tbl.type, 'table');
    assert.equal(tbl.truncated, true);
    assert.ok(Array.isArray(tbl.value) && tbl.value.length > 0);
    assert.deepEqual(after, { type: 'string', value: 'after' });
  });

  test('a 4 MB string of bytes that all need escaping', T, async (t) => {
    const { link } = await linked(t, { watchdog: 1, hardAbort: 1 });
    const { res, size } = await answer(link, 'return ("\\1\\2\\3\\4"):rep(1000000), 7');
    assert.equal(res.ok, true, JSON.stringify(res).slice(0, 300));
    assert.ok(size <= BUDGET, `frame is ${size} bytes`);
    assert.ok(size > BUDGET / 2, 'the room is used');
    assert.equal(res.result.truncated, true);
    const [s, n] = res.result.returns;
    assert.equal(s.truncated, true);
    assert.ok('\u0001\u0002\u0003\u0004'.repeat(1000000).startsWith(s.value));
    assert.deepEqual(n, { type: 'number', value: 7 });
  });

  test('200,000 returned values: the list is cut, the frame stays under the limit', T, async (t) => {
    const { link } = await linked(t, { watchdog: 1, hardAbort: 1 });
    const { res, size } = await answer(link, 'local t = {} for i = 1, 200000 do t[i] = i end return table.unpack(t)');
    assert.equal(res.ok, true, JSON.stringify(res).slice(0, 300));
    assert.ok(size <= BUDGET, `frame is ${size} bytes`);
    assert.equal(res.result.truncated, true);
    assert.deepEqual(res.result.returns.slice(0, 3).map((d) => d.value), [1, 2, 3]);
  });

  // About 7 s of CPU on an idle machine; the wait is wall time, so it is long enough for a loaded one
  // (the watchdog and the pacing count CPU time, so load does not change what is tested).
  test('a large --max-frame: the encoder yields between slices instead of tripping the watchdog', { timeout: 240000 }, async (t) => {
    // 2 MiB of control characters is 12 MiB of JSON escapes: far more than
    // one 1 s slice of encoding, so only a paced encoder answers (the old one fails here).
    // Not 0.3 s: with pacing every 0.25 s that left 50 ms for the unpaced steps and failed a
    // loaded full run with "Too long without yielding".
    const max = 4 * 1024 * 1024;
    const { link } = await linked(t, { watchdog: 1, hardAbort: 1, maxMessage: max, args: ['--max-frame', String(max)] });
    const { res, size } = await answer(link, 'print(("\\1"):rep(300000)) return ("\\2"):rep(2 * 1024 * 1024)', 180000);
    assert.equal(res.ok, true, JSON.stringify(res).slice(0, 300));
    assert.ok(size <= max - 4096, `frame is ${size} bytes`);
    assert.ok(size > max / 2, 'the room is used');
    assert.equal(res.result.truncated, true);
    assert.match(res.result.returns[0].value, /^\u0002+$/);
    assert.equal((await link.request('ping')).ok, true);
  });

  test('bug: on a lagging server (os.clock counts server ticks, CC\'s watchdog wall time) the encoder\'s 0.25 s slices were os.clock\'s, so a big answer ran into the watchdog', { timeout: 240000 }, async (t) => {
    // A server at 1 TPS: os.clock runs at 1/20 of the watchdog's clock (here 1 s, as in the test
    // above), so a slice of 0.25 s by os.clock was 5 s. The answer is the test above's.
    const max = 4 * 1024 * 1024;
    const { link } = await linked(t, { watchdog: 1, hardAbort: 1, tickRate: 0.05, maxMessage: max, args: ['--max-frame', String(max)] });
    const { res } = await answer(link, 'print(("\\1"):rep(300000)) return ("\\2"):rep(2 * 1024 * 1024)', 180000);
    assert.equal(res.ok, true, JSON.stringify(res).slice(0, 300));
    assert.match(res.result.returns[0].value, /^\u0002+$/);
    assert.equal((await link.request('ping')).ok, true);
  });
});

// Finding 2, "whatever happens, the bridge gets an answer": describing a
// returned table calls tostring on its table keys, so a key's __tostring runs
// inside the answer's encoder. One that raises, and one that never returns
// (the watchdog stops the encoder, and 1 s later CC's hard abort would stop
// the computer unless the program yields at once) still give an error answer.
describeLua('exec-lua: an answer that cannot be built is still an answer (issue 14, finding 2)', () => {
  const keyed = (body) => `local k = setmetatable({}, { __tostring = function() ${body} end }) return { [k] = 1 }`;

  test('a key whose __tostring raises: an error answer, the link goes on', T, async (t) => {
    const { link } = await linked(t, { watchdog: 1, hardAbort: 1 });
    const { res } = await answer(link, keyed('error("no text for you")'));
    assert.equal(res.ok, false, JSON.stringify(res));
    assert.match(res.error, /^could not build the answer: .*no text for you/);
    assert.equal((await link.request('ping')).ok, true);
  });

  test('a key whose __tostring never returns: the watchdog stops the encoder, an error answer, no hard abort', T, async (t) => {
    const { link } = await linked(t, { watchdog: 1, hardAbort: 1 });
    const { res } = await answer(link, keyed('while true do end'));
    assert.equal(res.ok, false, JSON.stringify(res));
    assert.match(res.error, /^could not build the answer: Too long without yielding/);
    assert.equal((await link.request('ping')).ok, true);
  });
});

describeLua('exec-lua: byte strings come back exactly (issue 14, finding 4)', () => {
  const bytes = (d) => (d.base64 !== undefined ? Buffer.from(d.base64, 'base64') : Buffer.from(d.value, 'utf8'));

  test('strings that are not UTF-8 are base64; UTF-8 text stays text', T, async (t) => {
    const { link } = await linked(t);
    const code = `local all = {} for i = 0, 255 do all[#all + 1] = string.char(i) end
      return "\\195\\169", "\\233", "\\128\\159", table.concat(all), "plain", "\\237\\160\\189\\237\\184\\128", "\\244\\144\\128\\128", "\\192\\175"`;
    const res = await link.exec(code);
    assert.equal(res.ok, true, JSON.stringify(res));
    const r = res.result.returns;
    assert.deepEqual(r[0], { type: 'string', value: 'é' }, 'valid UTF-8 is text');
    assert.deepEqual(r[1], { type: 'string', base64: Buffer.from([0xe9]).toString('base64') });
    assert.deepEqual(r[2], { type: 'string', base64: Buffer.from([0x80, 0x9f]).toString('base64') });
    assert.deepEqual(bytes(r[3]), Buffer.from(Array.from({ length: 256 }, (_, i) => i)));
    assert.deepEqual(r[4], { type: 'string', value: 'plain' });
    // UTF-8 encoded surrogates, a code point past U+10FFFF and an overlong form are not UTF-8
    assert.deepEqual(bytes(r[5]), Buffer.from([0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80]));
    assert.deepEqual(bytes(r[6]), Buffer.from([0xf4, 0x90, 0x80, 0x80]));
    assert.deepEqual(bytes(r[7]), Buffer.from([0xc0, 0xaf]));
    assert.equal(res.result.truncated, false);
  });

  test('a big byte string is cut to the frame in whole bytes, marked truncated', T, async (t) => {
    const { link } = await linked(t, { watchdog: 1, hardAbort: 1, args: ['--max-frame', '8192'] });
    const { res, size } = await answer(link, 'local t = {} for i = 0, 255 do t[#t + 1] = string.char(i) end return table.concat(t):rep(4000), "next"');
    assert.equal(res.ok, true, JSON.stringify(res).slice(0, 300));
    assert.ok(size <= 8192 - 1024, `frame is ${size} bytes`);
    const [s, next] = res.result.returns;
    assert.equal(s.truncated, true);
    const got = Buffer.from(s.base64, 'base64');
    assert.ok(got.length > 1000);
    assert.deepEqual(got, Buffer.from(Array.from({ length: got.length }, (_, i) => i % 256)));
    assert.deepEqual(next, { type: 'string', value: 'next' });
  });
});

describeLua('exec-lua: byte strings inside returned tables come back exactly (issue 14, finding 4)', () => {
  test('values and keys that are not UTF-8 are listed in "bytes" with their exact bytes; text stays text', T, async (t) => {
    const { link } = await linked(t);
    const res = await link.exec(NESTED_CODE);
    assert.equal(res.ok, true, JSON.stringify(res).slice(0, 300));
    const [tbl, list, plain] = res.result.returns;
    assert.deepEqual(exact(tbl), expected(NESTED_EXPECTED));
    assert.deepEqual(exact(list), expected(['é', Buffer.from([0xe9])]));
    assert.deepEqual(plain, { type: 'string', value: 'plain' });
    // The copy shows them as Lua literal bodies, so é and \233 read differently too.
    assert.equal(tbl.value.utf, 'é');
    assert.equal(tbl.value.latin, '\\233');
    assert.equal(tbl.value.c1, '\\128\\159');
    assert.equal(tbl.value['\\233'], 'byte key');
    assert.equal(tbl.value['é'], 'utf key');
    assert.deepEqual(list, { type: 'table', value: ['é', '\\233'], bytes: [{ path: [1], base64: '6Q==' }] });
    assert.equal(tbl.truncated, undefined);
    assert.equal(res.result.truncated, false);
  });

  test('a big nested byte string is cut in whole bytes, its entry and the table marked truncated', T, async (t) => {
    const { link } = await linked(t, { args: ['--max-frame', '8192'] });
    const { res, size } = await answer(link, 'local t = {} for i = 0, 255 do t[#t + 1] = string.char(i) end return { blob = table.concat(t):rep(100) }, "next"');
    assert.equal(res.ok, true, JSON.stringify(res).slice(0, 300));
    assert.ok(size <= 8192 - 1024, `frame is ${size} bytes`);
    const [tbl, next] = res.result.returns;
    assert.equal(tbl.truncated, true);
    assert.equal(tbl.bytes.length, 1);
    assert.equal(tbl.bytes[0].truncated, true);
    const got = Buffer.from(tbl.bytes[0].base64, 'base64');
    assert.ok(got.length > 100, `${got.length} bytes kept`);
    assert.deepEqual(got, Buffer.from(Array.from({ length: got.length }, (_, i) => i % 256)));
    exact(tbl); // the copy shows the same bytes
    assert.deepEqual(next, { type: 'string', value: 'next' });
  });
});

describeLua('exec-lua: repeated tables are not cycles (issue 14, finding 5)', () => {
  test('a table met twice is "<repeated>", only a table inside itself is "<cycle>"', T, async (t) => {
    const { link } = await linked(t);
    const res = await link.exec(`
      local leaf = { "leaf" }
      local diamond = { left = { x = leaf }, right = { y = leaf } }
      local a, b = {}, {}
      a.next, b.next = b, a -- a cycle through another table
      local list = { leaf, leaf, { leaf } }
      local deep = { one = { two = { three = leaf } } }
      deep.again = leaf
      return diamond, a, list, deep, leaf, leaf`);
    assert.equal(res.ok, true, JSON.stringify(res));
    const [diamond, cyc, list, deep, l1, l2] = res.result.returns.map((d) => d.value);
    const sides = [diamond.left.x, diamond.right.y];
    assert.deepEqual(sides.filter((v) => v === '<repeated>').length, 1, JSON.stringify(diamond));
    assert.deepEqual(sides.find((v) => v !== '<repeated>'), ['leaf']);
    assert.deepEqual(cyc, { next: { next: '<cycle>' } });
    assert.deepEqual(list, [['leaf'], '<repeated>', ['<repeated>']]);
    assert.ok(!JSON.stringify(deep).includes('<cycle>'), JSON.stringify(deep));
    assert.equal(JSON.stringify(deep).split('"leaf"').length - 1, 1, 'copied once, marked where met again');
    // Each returned value is described on its own: the same table twice is copied twice.
    assert.deepEqual([l1, l2], [['leaf'], ['leaf']]);
    assert.ok(res.result.returns.every((d) => !d.truncated));
  });
});
