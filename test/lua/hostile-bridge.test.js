// What the bridge sends, taken at its word only as far as it is sane: frames and params a buggy
// or hostile bridge could send, small frame limits, and what requests leave behind on the
// computer (memory, events, the terminal). Each 'bug:' test failed on the build before its fix.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { linkAddress, useComputer, linkedOnFakeBridge as linked, okResult as ok } from './computer.js';
import { closedPort, startFakeBridge } from './fake-bridge.js';
import { describeLua } from './lua-env.js';
import { bridgeFor, callOk, linkedComputer, textOf } from './mcp-helpers.js';
import { until } from '../helpers.js';

const T = { timeout: 30000 };

describeLua('hostile or buggy bridge', () => {
  for (const [name, opts] of [['CC 1.100.6+', {}], ['older CC, no parse_empty_array', { oldJson: true }]]) {
    test(`bug: an empty JSON array in exec-lua args reached the chunk as textutils.empty_json_array, CC's shared read-only marker (${name})`, T, async (t) => {
      const { link } = await linked(t, opts);
      const code = `local args = ...
        args.list[#args.list + 1] = "x"
        table.insert(args.nested.list, "y")
        return #args.list, #args.nested.list, textutils.serializeJSON(textutils.unserialiseJSON("[]")), #args.full`;
      const res = await link.request('exec-lua', { code, args: { list: [], nested: { list: [] }, full: [[], 2] } });
      assert.deepEqual(ok(res).returns.map((d) => d.value), [1, 1, '[]', 2],
        'a fresh table the chunk may fill; CC\'s own marker left empty for every other program');
    });
  }
});

describeLua('frames nested too deeply', () => {
  // 125,000 levels (250 KB, a server with max_websocket_message raised): CC's decoder parses it, but the
  // walk that joins surrogate pairs recursed once per level and overflowed the stack.
  const DEPTH = 125000;
  const deep = (type) => `{"type":"${type}","a":${'['.repeat(DEPTH)}"\\ud83d\\ude00"${']'.repeat(DEPTH)}}`;
  for (const [name, opts] of [['CC 1.100.6+', {}], ['older CC, no parse_empty_array', { oldJson: true }]]) {
    test(`bug: a deeply nested frame during the hello wait overflowed the stack after decoding and the program crashed (${name})`, T, async (t) => {
      const bridge = await startFakeBridge({ hello: (l) => { l.send(deep('hello-ok')); l.send({ type: 'hello-ok' }); } });
      t.after(() => bridge.close());
      const c = useComputer(t, { url: bridge.url, maxMessage: 1 << 20, ...opts });
      await c.waitForOutput(/waiting\s+for\s+requests/, 20000);
      assert.match(c.output, /warning: ignored a malformed frame \([^\n]*stack overflow/);
      const link = bridge.links.at(-1); // (the newest: a loaded machine may pass the 5 s hello wait, 50 ms here)
      ok(await link.request('ping'));
    });

    test(`bug: a deeply nested frame once linked was an "internal error", not a malformed frame (${name})`, T, async (t) => {
      const { c, link } = await linked(t, { maxMessage: 1 << 20, ...opts });
      const mark = c.output.length;
      link.send(deep('request'));
      await c.waitForOutput('ignored a malformed frame', 20000, mark);
      ok(await link.request('ping'));
      assert.doesNotMatch(c.output, /internal error/);
    });
  }
});

describeLua('memory after a request ends', () => {
  test('bug: finished exec-lua chunks (their captured output) stayed in the run list until some other event came', T, async (t) => {
    const { c, link } = await linked(t);
    ok(await link.exec('print(("x"):rep(100000))'));
    const before = await c.heapKiB();
    for (let i = 0; i < 30; i += 1) ok(await link.exec('print(("x"):rep(100000))'));
    const after = await c.heapKiB();
    // 30 answers of ~100 KB each were held before the fix (~3,000 KiB)
    assert.ok(after - before < 1000, `the heap grew by ${after - before} KiB over 30 finished chunks`);
  });
});

describeLua('params out of range', () => {
  test('bug: call-peripheral with a huge argCount looped without yielding until CC\'s watchdog stopped it, and never answered', T, async (t) => {
    const { c, link } = await linked(t, { peripherals: { left: 'monitor' } });
    for (const argCount of [1e15, -1, 1.5, 256]) {
      const res = await link.request('call-peripheral', { name: 'left', method: 'getSize', args: [], argCount });
      assert.equal(res.ok, false, JSON.stringify(res));
      assert.match(res.error, /argCount must be a whole number from 0 to 255/);
    }
    const fine = await link.request('call-peripheral', { name: 'left', method: 'getSize', args: [], argCount: 0 });
    assert.equal(fine.ok, true, JSON.stringify(fine));
    assert.doesNotMatch(c.output, /internal error/);
  });
});

describeLua('job params', () => {
  test('bug: job-cancel and job-status with a non-string job answered "no job table: 0x..."', T, async (t) => {
    const { link } = await linked(t);
    for (const method of ['job-cancel', 'job-status']) {
      for (const job of [{}, [1], 7, true]) {
        const res = await link.request(method, { job });
        assert.equal(res.ok, false, JSON.stringify(res));
        assert.equal(res.error, 'params.job must be a string (a job id)', `${method} ${JSON.stringify(job)}`);
      }
    }
  });
});

describeLua('reconnecting', () => {
  test('bug: every computer waited the same 1, 2, 4 ... s before reconnecting, so the computers of a server (one address) came back in the same tick each time', T, async (t) => {
    const port = await closedPort();
    const waits = async (id) => {
      const seconds = [];
      const c = useComputer(t, { id, url: `ws://127.0.0.1:${port}`, timerMs: (s) => (s === 60 ? 60000 : (seconds.push(s), 1)) }); // (60 s: the connect's own timeout)
      await c.waitForOutput('(attempt 8)', 20000);
      c.terminate();
      await c.waitForExit();
      const printed = [...c.output.matchAll(/retrying in ([\d.]+) s/g)].map((m) => Number(m[1]));
      return { seconds: seconds.slice(0, 7), printed: printed.slice(0, 7) };
    };
    const steps = [1, 2, 4, 8, 16, 30, 30];
    const a = await waits(1);
    const b = await waits(2);
    for (const { seconds, printed } of [a, b]) {
      seconds.forEach((s, i) => {
        assert.ok(s >= steps[i] / 2 && s <= steps[i], `wait ${i + 1} is ${s} s, outside ${steps[i] / 2}-${steps[i]} s`);
        assert.ok(Math.abs(printed[i] - s) < 1e-9, `printed ${printed[i]} s for a wait of ${s} s`);
      });
    }
    assert.notDeepEqual(a.seconds, b.seconds, 'two computers wait differently');
    assert.notDeepEqual(a.seconds, steps, 'the waits are spread, not the bare steps');
  });
});

describeLua('output capture', () => {
  test('bug: term.write at the end of a long row copied the whole row each time, so 250,000 one-character writes (a fraction of a second on a screen) ran into CC\'s watchdog', { timeout: 60000 }, async (t) => {
    const { link } = await linked(t);
    const res = await link.exec('for i = 1, 250000 do term.write(i % 10) end term.setCursorPos(1, 2) term.write("end") return "done"', 60000);
    const r = ok(res);
    assert.deepEqual(r.returns, [{ type: 'string', value: 'done' }]);
    assert.equal(r.truncated, true);
    assert.match(r.output, /^1234567890123/);
  });

  test('the capture still reads like the screen: writes over, past and at the end of a row', T, async (t) => {
    const { link } = await linked(t);
    const code = `term.write("hello world") term.setCursorPos(7, 1) term.write("WORLD!") term.write("..")
      term.setCursorPos(20, 1) term.write("far") term.setCursorPos(1, 1) term.write("J")
      term.setCursorPos(1, 2) term.write("abc") term.clearLine() term.write("x")
      term.setCursorPos(1, 3) term.write("1") term.write("2") term.setCursorPos(2, 3) term.write("Z")`;
    const r = ok(await link.exec(code));
    assert.equal(r.output, 'Jello WORLD!..     far\n' + '   x\n' + '1Z');
  });
});

describeLua('detached jobs', () => {
  test('bug: job-status sent a job\'s line in progress ("partial") whole, so a long unfinished row made a frame over CC\'s limit and the link dropped', T, async (t) => {
    const { c, link } = await linked(t);
    const before = await c.heapKiB();
    const started = await link.request('exec-lua', { code: 'term.write(("ab"):rep(100000)) os.pullEvent("never")', detach: true });
    assert.equal(started.ok, true, JSON.stringify(started));
    const held = (await c.heapKiB()) - before;
    assert.ok(held < 150, `the running job holds ${held} KiB (its row is kept up to 64 KiB, as its output is)`);
    const status = await link.request('job-status', { job: started.id });
    const r = ok(status);
    assert.equal(r.state, 'running');
    assert.ok(r.partial.length > 0 && r.partial.length <= 131072 / 4, `partial of ${r.partial.length} bytes`);
    assert.match(r.partial, /^(ab)+/);
    assert.ok(link.raw.every((text) => text.length <= 131072));
    assert.equal((await link.request('ping')).ok, true, 'the link is still up');
    assert.doesNotMatch(c.output, /could not send/);
  });
});

describeLua('answers the frame limit did not bound', () => {
  test('bug: list-peripherals sent every peripheral whatever the frame limit, so a computer with many of them made a frame over the bridge\'s CC_MAX_FRAME_BYTES and the bridge closed the link (1009)', T, async (t) => {
    const LIMIT = 8192;
    const chests = Object.fromEntries(Array.from({ length: 80 }, (_, i) => [`minecraft:chest_with_a_long_name_${String(i).padStart(2, '0')}`, 'chest']));
    const bridge = await bridgeFor(t, { CC_MAX_FRAME_BYTES: String(LIMIT) });
    const c = await linkedComputer(t, bridge, { id: 41, peripherals: chests, args: ['--max-frame', String(LIMIT)] });
    const link = bridge.links.get(41);
    const result = await callOk(bridge, 'list-peripherals', { computerId: 41 });
    const listed = result.structuredContent.peripherals;
    assert.ok(listed.length > 0 && listed.length < 80, `${listed.length} of 80 listed`);
    assert.equal(result.structuredContent.omitted, 80 - listed.length);
    assert.match(textOf(result), new RegExp(`${80 - listed.length} more peripherals? left out to fit the frame limit`));
    assert.deepEqual(listed.map((p) => p.name), Object.keys(chests).slice(0, listed.length), 'the first ones by name');
    for (const frame of c.sent) assert.ok(Buffer.byteLength(frame) <= LIMIT, `a frame of ${Buffer.byteLength(frame)} bytes`);
    assert.equal(bridge.links.get(41), link, 'the same link');
    assert.doesNotMatch(c.output, /link closed|retrying/);
  });
});

describeLua('command lines the program writes', () => {
  test('bug: a --token holding a space was split by CC\'s shell in the startup file, so the computer failed at every boot ("Too many arguments")', T, async (t) => {
    const bridge = await startFakeBridge();
    t.after(() => bridge.close());
    const setup = useComputer(t, { args: ['startup', bridge.url, '--foreground', '--token', 'two words'] });
    assert.equal((await setup.waitForExit()).code, 0, setup.output);
    const file = readFileSync(path.join(setup.root, 'startup', 'mcp-computer.lua'), 'utf8');
    const boot = useComputer(t, { command: 'startup/mcp-computer', files: { 'startup/mcp-computer.lua': file } });
    await boot.waitForOutput('waiting for requests');
    const link = await bridge.link(0);
    assert.equal((await link.hello).token, 'two words');
  });

  test('bug: --background on an advanced computer split a --token holding a space in its tab\'s command line, so the tab never linked', T, async (t) => {
    const bridge = await startFakeBridge();
    t.after(() => bridge.close());
    const c = useComputer(t, { url: bridge.url, multishell: true, args: ['--background', '--token', 'two words'] });
    await c.waitForOutput(/in tab 2/);
    const link = await bridge.link(0);
    assert.equal((await link.hello).token, 'two words');
  });

  test('a --token holding a double quote cannot be put on a command line: said so, and how else to give it', T, async (t) => {
    const c = useComputer(t, { args: ['startup', 'ws://10.0.0.5:3001', '--token', 'say "hi"'] });
    const { code, output } = await c.waitForExit();
    assert.equal(code, 1);
    assert.match(output, /--token value holds a double quote, which CC's shell cannot pass on a command line: set mcp\.token instead/);
  });
});

describeLua('the program\'s own events', () => {
  test('bug: a pacing event left over when the link dropped while an answer was being built reached chunks as "mcp_computer_pace"', T, async (t) => {
    const bridge = await startFakeBridge();
    t.after(() => bridge.close());
    const c = useComputer(t, { url: bridge.url });
    await c.waitForOutput('waiting for requests');
    const first = await bridge.link(0);
    // a detached job that reports every event it gets
    const job = await first.request('exec-lua', { code: 'local seen = {} while true do local e = os.pullEvent() seen[#seen + 1] = e if e == "stop" then return table.concat(seen, ",") end end', detach: true });
    assert.equal(job.ok, true);
    // an answer slow to build (keys whose __tostring runs 0.1 s each, so it is paced over several
    // resumes); the first of them queues the link's close, as the bridge going away would
    const code = `local url = ${JSON.stringify(linkAddress(bridge.url))}
      local t = {}
      for i = 1, 8 do
        t[setmetatable({}, { __tostring = function()
          if i == 1 then os.queueEvent("websocket_closed", url, "gone", 1001) end
          local s = os.clock() while os.clock() - s < 0.1 do end
          return "k" .. i
        end })] = i
      end
      return t`;
    first.send({ type: 'request', id: 'slow', method: 'exec-lua', params: { code } });
    const second = await bridge.link(1, 20000);
    await second.hello;
    c.queueEvent('stop');
    const status = await until(async () => {
      const r = await second.request('job-status', { job: job.id });
      return r.result?.state === 'done' ? r.result : null;
    }, 'the job finished');
    assert.deepEqual(status.returns, [{ type: 'string', value: 'stop' }], 'the job saw only the events queued for it');
  });
});

describeLua('background mode with a status monitor', () => {
  const SHELL = `print("shell ready")
while true do
    local ev = { os.pullEventRaw() }
    if ev[1] == "test_run" then print("shell: " .. ev[2]) end
end`;

  test('bug: a status monitor removed while linked left the terminal redirected to it, so the shell beside the link and every exec-lua after the next log line failed', T, async (t) => {
    const bridge = await startFakeBridge();
    t.after(() => bridge.close());
    const c = useComputer(t, { url: bridge.url, args: ['--background', '--monitor', 'left'], peripherals: { left: 'monitor' }, files: { 'shell.lua': SHELL } });
    await c.waitForOutput('shell ready');
    const link = await bridge.liveLink(); // (not link(0): the 5 s hello wait is 50 ms here)
    assert.equal(ok(await link.exec('return 1')).returns[0].value, 1);
    c.detachPeripheral('left');
    link.send('not json'); // a warning: a log line, shown on the monitor too
    assert.equal(ok(await link.exec('print("after") return 2')).returns[0].value, 2);
    c.queueEvent('test_run', 'still here');
    await c.waitForOutput('shell: still here');
  });
});

describeLua('a row past its limit', () => {
  test('bug: each write past a capture\'s row limit still added up to 256 spaces of padding, so a job writing long text along one row grew without bound', T, async (t) => {
    const { c, link } = await linked(t);
    const before = await c.heapKiB();
    const started = await link.request('exec-lua', { code: 'for i = 1, 4000 do term.write(("x"):rep(1000)) end os.pullEvent("never")', detach: true });
    assert.equal(started.ok, true, JSON.stringify(started));
    const held = (await c.heapKiB()) - before;
    assert.ok(held < 150, `the running job holds ${held} KiB`);
    const r = ok(await link.request('job-status', { job: started.id }));
    assert.match(r.partial, /^x+$/);
  });
});

describeLua('the smallest frame limit', () => {
  test('bug: with a 1024-byte frame limit (the least --max-frame and CC_MAX_FRAME_BYTES take) read-file sent no bytes at all, so every read failed as a file that ended early', T, async (t) => {
    const content = Array.from({ length: 40 }, (_, i) => `line ${i} of a small file\n`).join('');
    const { c, link } = await linked(t, { args: ['--max-frame', '1024'], files: { 'small.txt': content } });
    let offset = 0;
    let checksum = 1;
    let data = Buffer.alloc(0);
    while (offset < content.length) {
      const r = ok(await link.request('read-file', { path: 'small.txt', offset, checksum }));
      assert.ok(r.length > 0, `a piece of ${r.length} bytes at ${offset}`);
      data = Buffer.concat([data, Buffer.from(r.data, 'base64')]);
      offset += r.length;
      checksum = r.checksum;
    }
    assert.equal(data.toString('utf8'), content);
    const listed = ok(await link.request('list-files', { path: '/' }));
    assert.ok(listed.entries.length > 0);
    for (const text of link.raw) assert.ok(Buffer.byteLength(text) <= 1024, `a frame of ${Buffer.byteLength(text)} bytes`);
    assert.doesNotMatch(c.output, /could not send/);
  });
});

describeLua('errors and the frame limit', () => {
  test('bug: error texts were cut at 2 KiB whatever the frame limit, so with a small one (1024 bytes) a long error made a frame over it', T, async (t) => {
    const { link } = await linked(t, { args: ['--max-frame', '1024'] });
    const failed = await link.exec('error(("e"):rep(2000))');
    assert.equal(failed.ok, false);
    assert.match(failed.error, /^exec-lua:1: e+\.\.\.$/);
    const missing = await link.request('read-file', { path: 'n'.repeat(900) });
    assert.equal(missing.ok, false);
    assert.match(missing.error, /^\/n+/);
    const refused = await link.request('call-peripheral', { name: 'p'.repeat(900), method: 'x' });
    assert.equal(refused.ok, false);
    for (const text of link.raw) assert.ok(Buffer.byteLength(text) <= 1024, `a frame of ${Buffer.byteLength(text)} bytes`);
  });

  test('bug: job-status sent a failed job\'s error whole (up to 2 KiB) beside half a frame of output, so with a small frame limit the answer was over it', T, async (t) => {
    const { link } = await linked(t, { args: ['--max-frame', '1024'] });
    const started = await link.request('exec-lua', { code: 'for i = 1, 100 do print(("o"):rep(40)) end error(("E"):rep(3000))', detach: true });
    assert.equal(started.ok, true);
    let cursor = 0;
    let output = '';
    for (;;) {
      const r = ok(await link.request('job-status', { job: started.id, cursor }));
      assert.equal(r.state, 'failed');
      assert.match(r.error, /^exec-lua:1: E+\.\.\.$/);
      output += r.output;
      cursor = r.cursor;
      if (!r.more) break;
      assert.ok(r.output.length > 0, 'each piece brings output');
    }
    assert.equal(output, `${'o'.repeat(40)}\n`.repeat(100));
    for (const text of link.raw) assert.ok(Buffer.byteLength(text) <= 1024, `a frame of ${Buffer.byteLength(text)} bytes`);
  });

  for (const maxFrame of [2048, 1024]) {
    test(`bug: read-screen sent the whole screen with its colour rows whatever the frame limit (--max-frame ${maxFrame})`, T, async (t) => {
      const SHELL = 'for i = 1, 30 do print(("line %02d "):format(i) .. ("s"):rep(40)) end while true do os.pullEventRaw() end';
      const bridge = await startFakeBridge();
      t.after(() => bridge.close());
      const c = useComputer(t, { url: bridge.url, size: [51, 19], args: ['--background', '--max-frame', String(maxFrame)], files: { 'shell.lua': SHELL } });
      await c.waitForOutput('line 30');
      const link = await bridge.liveLink(); // (not link(0): the 5 s hello wait is 50 ms here)
      const res = await link.request('read-screen', {});
      if (maxFrame === 2048) {
        const r = ok(res);
        assert.equal(r.coloursOmitted, true);
        assert.deepEqual([r.foreground, r.background], [[], []]);
        assert.equal(r.lines.length, 19);
        assert.match(r.lines[17], /^line 30 s{40}/);
      } else {
        assert.equal(res.ok, false);
        assert.match(res.error, /^the screen's text \(\d+ bytes as JSON\) does not fit this link's frame limit \(1024 bytes\)/);
      }
      for (const text of link.raw) assert.ok(Buffer.byteLength(text) <= maxFrame, `a frame of ${Buffer.byteLength(text)} bytes`);
    });
  }
});
