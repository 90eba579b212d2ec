// End to end on a real ComputerCraft runtime: dist/mcp-computer.lua runs on
// CraftOS-PC (CC:Tweaked's own ROM, real websockets) against the real bridge
// (dist/), driven over MCP. Runs when the runtime is on this machine (see
// craftos.js); otherwise skipped with one line. Under CI=true, a runtime that
// is present but does not boot fails the run.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { startBridge } from '../../dist/bridge.js';
import { bridgeConfig, CRAFTOS_DIR, CraftosComputer, NOT_FOUND, READY, runLine, useLinkedCraftos } from './craftos.js';
import { PROGRAM } from './computer.js';
import { exact, expected, NESTED_CODE, NESTED_EXPECTED } from './exact.js';
import { callTool } from './mcp-helpers.js';

const T = { timeout: 60000 };

async function preflight() {
  const c = new CraftosComputer({ id: 99, startup: 'print("craftos-" .. "ready") os.shutdown()\n' });
  try {
    await c.waitForOutput('craftos-ready', 20000);
    return null;
  } catch (err) {
    return err;
  } finally {
    c.cleanup();
  }
}

// After mcp-computer ends, startup.lua says so and shuts the computer down.
const AFTER = 'print("startup-" .. "done")\nos.shutdown()\n';

const probeText = async (bridge) => (await callTool(bridge, 'probe-computers')).content[0].text;
const execLua = async (bridge, computerId, code, timeoutMs = 15000) =>
  (await callTool(bridge, 'exec-lua', { computerId, code, timeoutMs })).structuredContent;

const startError = CRAFTOS_DIR ? await preflight() : null;

if (!CRAFTOS_DIR) {
  test('CraftOS-PC tests', { skip: NOT_FOUND }, () => {});
} else if (startError) {
  if (process.env.CI === 'true') {
    test('CraftOS-PC starts', () => {
      throw new Error(`CraftOS-PC at ${CRAFTOS_DIR} is present but did not boot: ${startError.message}`);
    });
  } else {
    test('CraftOS-PC tests', { skip: `CraftOS-PC at ${CRAFTOS_DIR} did not boot: ${startError.message.split('\n')[0]}` }, () => {});
  }
} else {
  describe('CraftOS-PC: one linked computer', () => {
    const ctx = useLinkedCraftos({ id: 7, pre: 'os.setComputerLabel("base-turtle")\n', post: AFTER });

    test('links with its status lines and answers probe-computers', T, async () => {
      const lines = ctx.pc.lines();
      assert.ok(lines.some((l) => /^mcp-computer v[\d.]+ connecting to/.test(l)), lines.join('\n'));
      assert.ok(lines.includes(`ws://127.0.0.1:${new URL(ctx.bridge.linkUrl).port}`), lines.join('\n'));
      assert.ok(lines.includes('linked as 7 (Label: base-turtle)'), lines.join('\n'));
      assert.ok(lines.includes('waiting for requests... Press Ctrl+T to stop.'), lines.join('\n'));
      assert.equal(await probeText(ctx.bridge), 'pong from 7 (Label: base-turtle)');
    });

    test('exec-lua: captured output and returned values', T, async () => {
      const sc = await execLua(ctx.bridge, 7, 'print("hi from " .. os.getComputerLabel()) write("no newline") return 1, nil, { a = "b" }, _HOST');
      assert.equal(sc.ok, true, JSON.stringify(sc));
      assert.equal(sc.output, 'hi from base-turtle\nno newline');
      assert.deepEqual(sc.returns.slice(0, 3), [{ type: 'number', value: 1 }, { type: 'nil' }, { type: 'table', value: { a: 'b' } }]);
      assert.match(sc.returns[3].value, /^ComputerCraft .*CraftOS-PC/);
      const failed = await execLua(ctx.bridge, 7, 'print("partial") error("nope")');
      assert.equal(failed.ok, false);
      assert.equal(failed.output, 'partial\n');
      assert.match(failed.error, /exec-lua:1: nope/);
    });

    test('exec-lua: text outside the BMP arrives as real UTF-8 (4 bytes, files intact)', T, async () => {
      const sc = await execLua(ctx.bridge, 7, 'local s = "😀 ok" local f = fs.open("/emoji.txt", "wb") f.write(s) f.close() return #"😀", s');
      assert.equal(sc.ok, true, JSON.stringify(sc));
      assert.deepEqual(sc.returns, [{ type: 'number', value: 4 }, { type: 'string', value: '😀 ok' }]);
      assert.equal(readFileSync(path.join(ctx.pc.files, 'emoji.txt')).toString('hex'), Buffer.from('😀 ok').toString('hex'));
    });

    test('exec-lua: strings that are not UTF-8 come back exactly as base64 (issue 14, finding 4)', T, async () => {
      const code = 'local t = {} for i = 0, 255 do t[#t + 1] = string.char(i) end return "\\195\\169", "\\233", "\\128\\159", table.concat(t)';
      const sc = await execLua(ctx.bridge, 7, code);
      assert.equal(sc.ok, true, JSON.stringify(sc));
      assert.deepEqual(sc.returns.slice(0, 3), [
        { type: 'string', value: 'é' },
        { type: 'string', base64: Buffer.from([0xe9]).toString('base64') },
        { type: 'string', base64: Buffer.from([0x80, 0x9f]).toString('base64') },
      ]);
      assert.deepEqual(Buffer.from(sc.returns[3].base64, 'base64'), Buffer.from(Array.from({ length: 256 }, (_, i) => i)));
    });

    test('exec-lua: strings that are not UTF-8 inside returned tables, values and keys, come back exactly (issue 14, finding 4)', T, async () => {
      const sc = await execLua(ctx.bridge, 7, NESTED_CODE);
      assert.equal(sc.ok, true, JSON.stringify(sc).slice(0, 300));
      const [tbl, list, plain] = sc.returns;
      assert.deepEqual(exact(tbl), expected(NESTED_EXPECTED));
      assert.deepEqual(exact(list), expected(['é', Buffer.from([0xe9])]));
      assert.deepEqual(plain, { type: 'string', value: 'plain' });
      assert.equal(tbl.value.latin, '\\233');
      assert.equal(sc.truncated, false);
    });

    test('exec-lua: ls on a big folder does not page; read() and io.read() fail at once', T, async () => {
      const code = 'for i = 1, 150 do fs.open(("/many/f%03d"):format(i), "w").close() end shell.run("ls /many") return "listed"';
      const sc = await execLua(ctx.bridge, 7, code, 10000);
      assert.equal(sc.ok, true, JSON.stringify(sc).slice(0, 300));
      assert.match(sc.output, /f001/);
      assert.match(sc.output, /f150/);
      assert.doesNotMatch(sc.output, /Press any key/);
      for (const call of ['read()', 'io.read()']) {
        const r = await execLua(ctx.bridge, 7, `return ${call}`, 10000);
        assert.equal(r.ok, false, call);
        assert.match(r.error, /read\(\) has no input here/, call);
      }
    });

    test('exec-lua: a large output is truncated within the link limit', T, async () => {
      const sc = await execLua(ctx.bridge, 7, 'for i = 1, 20000 do print(("%05d"):format(i) .. ("z"):rep(30)) end return "done"', 30000);
      assert.equal(sc.ok, true, JSON.stringify(sc).slice(0, 300));
      assert.equal(sc.truncated, true);
      assert.match(sc.output, /^00001z{30}\n00002z{30}\n/);
      assert.deepEqual(sc.returns, [{ type: 'string', value: 'done' }]);
    });

    test('exec-lua: 10,000 returned strings of 4 KiB and a 4 MB byte string get an answer (issue 14, finding 2)', T, async () => {
      const many = await execLua(ctx.bridge, 7, 'local t, s = {}, ("x"):rep(4096) for i = 1, 10000 do t[i] = s .. i end return table.unpack(t)', 30000);
      assert.equal(many.ok, true, JSON.stringify(many).slice(0, 300));
      assert.equal(many.truncated, true);
      assert.ok(many.returns.length > 1000 && many.returns.every((d) => d.type === 'string'));
      const big = await execLua(ctx.bridge, 7, 'return ("\\1\\2\\3\\4"):rep(1000000), 7', 30000);
      assert.equal(big.ok, true, JSON.stringify(big).slice(0, 300));
      assert.equal(big.truncated, true);
      assert.deepEqual(big.returns[1], { type: 'number', value: 7 });
      assert.equal(await probeText(ctx.bridge), 'pong from 7 (Label: base-turtle)');
    });

    test('exec-lua: a timed-out chunk is cancelled and never runs on', T, async () => {
      const mark = ctx.pc.output.length;
      const result = await callTool(ctx.bridge, 'exec-lua', {
        computerId: 7,
        code: 'os.pullEvent("go") local f = fs.open("/after.txt", "w") f.write("ran") f.close()',
        timeoutMs: 300,
      });
      assert.equal(result.isError, true);
      assert.match(result.structuredContent.error, /timed out/);
      await ctx.pc.waitForOutput('cancelled exec-lua', 20000, mark);
      const sc = await execLua(ctx.bridge, 7, 'os.queueEvent("go") os.pullEvent("go") return fs.exists("/after.txt")');
      assert.deepEqual(sc.returns, [{ type: 'boolean', value: false }]);
    });

    test('exec-lua: a chunk that never yields gets an answer and the computer lives on', T, async () => {
      const sc = await execLua(ctx.bridge, 7, 'print("spinning") while true do end', 30000);
      assert.equal(sc.ok, false, JSON.stringify(sc));
      assert.match(sc.error, /Too long without yielding/);
      assert.equal(await probeText(ctx.bridge), 'pong from 7 (Label: base-turtle)');
    });

    // Headless CraftOS-PC takes no keyboard, so the terminate event Ctrl+T
    // makes is queued by a program in another multishell tab, outside every chunk
    // (a chunk's own terminate ends that chunk alone): multishell gives it to the
    // focused tab, the link's, which sees exactly what it sees on Ctrl+T.
    test('terminate (Ctrl+T) stops the program cleanly and it leaves the bridge', T, async () => {
      const mark = ctx.pc.output.length;
      const result = await callTool(ctx.bridge, 'exec-lua', { computerId: 7, code: 'local f = fs.open("/later.lua", "w") f.write("sleep(0.2) os.queueEvent(\'terminate\')") f.close() shell.openTab("/later.lua") os.pullEvent("never")', timeoutMs: 2000 });
      assert.equal(result.isError, true);
      await ctx.pc.waitForOutput('mcp-computer stopped.', 20000, mark);
      await ctx.pc.waitForOutput('startup-done', 20000, mark);
      let text;
      do text = await probeText(ctx.bridge); while (/pong from 7/.test(text));
      assert.doesNotMatch(text, /pong/);
    });
  });

  describe('CraftOS-PC: installed with wget run (issue 14, finding 8)', () => {
    test('wget run ... startup <ws-url> saves the program and a startup file that runs it, not wget', T, async (t) => {
      const bridge = await startBridge(bridgeConfig());
      const http = bridge.linkUrl.replace(/^ws:/, 'http:').replace(/\/?$/, '/mcp-computer.lua');
      const lua = (v) => JSON.stringify(v);
      const boot = [
        `shell.run("wget", "run", ${lua(http)}, "--bogus")`,
        'print("usage-" .. "done")',
        `shell.run("wget", "run", ${lua(http)}, "startup", ${lua(bridge.linkUrl)}, "--foreground")`,
        'shell.run("/startup/mcp-computer.lua")',
        'os.shutdown()',
      ].join('\n');
      const pc = new CraftosComputer({ id: 11, startup: boot, program: false });
      t.after(async () => {
        pc.cleanup();
        await bridge.close(100);
      });
      await pc.waitForOutput('usage-done');
      await pc.waitForOutput(READY, 30000);
      const lines = pc.lines();
      const usageAt = lines.indexOf('usage-done');
      const usage = lines.slice(0, usageAt);
      assert.ok(usage.some((l) => l.startsWith('mcp-computer <ws-url> [options]')), usage.join('\n'));
      assert.ok(!usage.some((l) => /^wget <ws-url>/.test(l)), usage.join('\n'));
      assert.ok(!lines.includes('nil'), 'wget printed no "nil" after a usage error');
      assert.ok(lines.includes('Saved the program as /mcp-computer.lua.'), lines.join('\n'));
      assert.equal(readFileSync(path.join(pc.files, 'mcp-computer.lua'), 'utf8'), readFileSync(PROGRAM, 'utf8'));
      const startupFile = readFileSync(path.join(pc.files, 'startup', 'mcp-computer.lua'), 'utf8');
      assert.match(startupFile, /^shell\.run\("\/mcp-computer\.lua", "ws:\/\/127\.0\.0\.1:\d+"\)$/m, startupFile);
      assert.doesNotMatch(startupFile, /wget/);
      assert.equal(await probeText(bridge), 'pong from 11 (Label: null)');
    });
  });

  describe('CraftOS-PC: bridge restart', () => {
    test('the computer relinks to a bridge restarted on the same port', T, async (t) => {
      const first = await startBridge(bridgeConfig());
      const port = new URL(first.linkUrl).port;
      const pc = new CraftosComputer({ id: 8, startup: runLine(first.linkUrl) + AFTER });
      let second;
      t.after(async () => {
        pc.cleanup();
        await first.close(100);
        await second?.close(100);
      });
      await pc.waitForOutput(READY);
      const mark = pc.output.length;
      await first.close(100);
      await pc.waitForOutput('the bridge is shutting down', 20000, mark);
      second = await startBridge(bridgeConfig({ CC_LINK_PORT: port }));
      const again = await pc.waitForOutput('reconnecting to', 30000, mark);
      await pc.waitForOutput(READY, 30000, again);
      assert.equal(await probeText(second), 'pong from 8 (Label: null)');
    });
  });
}
