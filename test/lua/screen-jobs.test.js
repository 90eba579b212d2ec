// Issue 11 part B against the real bridge (dist/), over MCP, with mcp-computer under the Lua 5.2
// harness: read-screen and send-input driving a program that reads input with read() in the
// player's shell (background mode); the foreground answer; detached jobs (status from a cursor,
// result, cancel, bounded output, surviving a relink).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startBridge } from '../../dist/bridge.js';
import { loadConfig } from '../../dist/config.js';
import { useComputer } from './computer.js';
import { describeLua } from './lua-env.js';
import { bridgeFor, callTool } from './mcp-helpers.js';

const T = { timeout: 60000 };

const text = (r) => r.content.map((c) => c.text).join('\n');
const pause = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` until it returns something truthy (bounded by the test's timeout). */
let last = null;
async function until(fn, what) {
  for (let i = 0; i < 2000; i++) {
    const v = await fn();
    if (v) return v;
    await pause(10);
  }
  throw new Error(`never: ${what}${last ? `\n${JSON.stringify(last)}` : ''}`);
}

// A shell that reads command lines with read(), as CC's does, with a yellow prompt.
const SHELL = `
while true do
    term.setTextColour(colours.yellow)
    write("> ")
    term.setTextColour(colours.white)
    local ok, line = pcall(read)
    if not ok then printError(line)
    elseif line == "exit" then return
    elseif line ~= "" then shell.run(line) end
end
`;
const ASK = 'write("Name? ") local name = read() print("hi " .. name .. "!")\n';

async function screenWith(bridge, id, pattern) {
  return until(async () => {
    const r = await callTool(bridge, 'read-screen', { computerId: id });
    assert.equal(r.isError, undefined, text(r));
    last = r.structuredContent.lines;
    return r.structuredContent.lines.some((l) => pattern.test(l)) ? r.structuredContent : null;
  }, `a screen row matching ${pattern}`);
}

describeLua('screen and keyboard (lua-tools)', () => {
  test('read-screen and send-input drive a program that reads input with read() in the background shell', T, async (t) => {
    const bridge = await bridgeFor(t);
    const c = useComputer(t, { id: 9, url: bridge.linkUrl, args: ['--background'], size: [30, 8], files: { 'shell.lua': SHELL, 'ask.lua': ASK } });
    await c.waitForOutput('> ');
    await until(async () => /pong/.test(text(await callTool(bridge, 'probe-computers'))), 'the link answers');

    let s = await screenWith(bridge, 9, /^> /);
    assert.equal(s.width, 30);
    assert.equal(s.height, 8);
    assert.equal(s.lines.length, 8);
    assert.match(s.lines[0], /^mcp-computer: linking to +$/);
    const prompt = s.lines.findIndex((l) => l.startsWith('> '));
    assert.equal(s.cursorY, prompt + 1);
    assert.equal(s.cursorX, 3);
    assert.equal(s.cursorBlink, true);
    assert.equal(s.foreground[prompt].slice(0, 2), '44', 'the prompt is yellow (blit 4)');
    assert.equal(s.background[prompt], 'f'.repeat(30));
    assert.ok(s.lines.every((l) => l.length === 30));

    // Type the command; the program asks; answer with a typo fixed by backspace.
    const typed = await callTool(bridge, 'send-input', { computerId: 9, text: 'ask\n' });
    assert.equal(text(typed), 'Queued 5 input events.');
    s = await screenWith(bridge, 9, /^Name\? +$/);
    const row = s.lines.findIndex((l) => l.startsWith('Name? '));
    assert.equal(s.lines[row - 1].trimEnd(), '> ask');
    assert.deepEqual([s.cursorX, s.cursorY], [7, row + 1]);

    await callTool(bridge, 'send-input', { computerId: 9, text: 'Stevx', keys: ['backspace', 'e', 'enter'] });
    s = await screenWith(bridge, 9, /^hi Steve!/);
    const rendered = text(await callTool(bridge, 'read-screen', { computerId: 9 }));
    assert.match(rendered, /Name\? Steve\nhi Steve!\n>\n\[screen 30x8, cursor at column 3, row \d, blinking\]$/);

    // paste, then Ctrl+T while the program waits: the shell gets terminate, the link keeps going.
    await callTool(bridge, 'send-input', { computerId: 9, text: 'ask\n' });
    await screenWith(bridge, 9, /^Name\? +$/);
    await callTool(bridge, 'send-input', { computerId: 9, text: 'Alex the Great', paste: true });
    await screenWith(bridge, 9, /^Name\? Alex the Great/);
    await callTool(bridge, 'send-input', { computerId: 9, keys: ['ctrl+t'] });
    s = await screenWith(bridge, 9, /^Name\? Alex the GreatTerminated/);
    assert.match(text(await callTool(bridge, 'probe-computers')), /pong from 9/);

    // The screen scrolled: only 8 rows are kept, the newest at the bottom.
    for (let i = 0; i < 3; i++) await callTool(bridge, 'send-input', { computerId: 9, text: `nothing${i}\n` });
    s = await screenWith(bridge, 9, /^> nothing2/);
    assert.ok(!s.lines.some((l) => l.startsWith('mcp-computer: linking')), 'the first row scrolled away');

    // Bad keys are refused with the reason; nothing is queued.
    const bad = await callTool(bridge, 'send-input', { computerId: 9, keys: ['enter', 'hyperspace'] });
    assert.equal(bad.isError, true);
    assert.match(text(bad), /unknown key hyperspace/);
    const reboot = await callTool(bridge, 'send-input', { computerId: 9, keys: ['ctrl+r'] });
    assert.match(text(reboot), /reboot/);
    const none = await callTool(bridge, 'send-input', { computerId: 9 });
    assert.match(text(none), /Give "text"/);
    const long = await callTool(bridge, 'send-input', { computerId: 9, text: 'x'.repeat(300) });
    assert.match(text(long), /300 events; at most 99/);

    await callTool(bridge, 'send-input', { computerId: 9, text: 'exit\n' });
    assert.equal((await c.waitForExit()).code, 0);
  });

  test('bug: one send-input queued up to 200 events, so two back to back overflowed CC\'s 256-event queue (the rest dropped, each answer saying all were queued)', T, async (t) => {
    const bridge = await bridgeFor(t);
    const c = useComputer(t, { id: 11, url: bridge.linkUrl, args: ['--background'], size: [30, 8], files: { 'shell.lua': SHELL, 'ask.lua': ASK } });
    await c.waitForOutput('> ');
    await until(async () => /pong/.test(text(await callTool(bridge, 'probe-computers'))), 'the link answers');
    const big = await callTool(bridge, 'send-input', { computerId: 11, text: 'x'.repeat(150) });
    assert.equal(big.isError, true, text(big));
    assert.match(text(big), /150 events; at most 99/);
    // a chunk waiting for any event never gets the program's mark queued after the input
    const seen = callTool(bridge, 'exec-lua', { computerId: 11, code: 'local names = {} repeat names[#names + 1] = os.pullEvent() until names[#names] == "key_up" os.queueEvent("done") names[#names + 1] = os.pullEvent() return table.concat(names, ",")' });
    const ok = await callTool(bridge, 'send-input', { computerId: 11, keys: ['a'] });
    assert.equal(ok.structuredContent.queued, 3, text(ok));
    assert.match(text(await seen), /key,char,key_up,done/, 'the mark queued after the input is the program\'s own');
    await callTool(bridge, 'send-input', { computerId: 11, keys: ['backspace'] });
    await callTool(bridge, 'send-input', { computerId: 11, text: 'exit\n' });
    assert.equal((await c.waitForExit()).code, 0);
  });

  test('advanced computer (multishell): the shell tab is read and typed into while the link runs in its own tab', T, async (t) => {
    const bridge = await bridgeFor(t);
    const files = { 'shell.lua': SHELL, 'ask.lua': ASK, 'boot.lua': `shell.run("mcp-computer", ${JSON.stringify(bridge.linkUrl)}, "--background")\nshell.run("shell")\n` };
    const c = useComputer(t, { id: 10, command: 'boot', multishell: true, size: [40, 10], files });
    await c.waitForOutput(/in tab 2/);
    await until(async () => /pong/.test(text(await callTool(bridge, 'probe-computers'))), 'the link answers');
    let s = await screenWith(bridge, 10, /^> /);
    assert.ok(s.lines.some((l) => /^mcp-computer: linking to/.test(l)), s.lines.join('\n'));
    await callTool(bridge, 'send-input', { computerId: 10, text: 'ask\n' });
    await screenWith(bridge, 10, /^Name\? +$/);
    await callTool(bridge, 'send-input', { computerId: 10, text: 'Tab One\n' });
    s = await screenWith(bridge, 10, /^hi Tab One!/);
    assert.equal(s.foreground[s.lines.findIndex((l) => l.startsWith('hi Tab One!')) + 1].slice(0, 2), '44');
  });

  test('foreground mode: read-screen and send-input answer that there is no shell', T, async (t) => {
    const bridge = await bridgeFor(t);
    const c = useComputer(t, { id: 2, url: bridge.linkUrl, timeScale: 0.01 });
    await c.waitForOutput('waiting for requests');
    for (const [name, args] of [['read-screen', {}], ['send-input', { text: 'ls\n' }]]) {
      const r = await callTool(bridge, name, { computerId: 2, ...args });
      assert.equal(r.isError, true);
      assert.match(text(r), /there is no shell to read: mcp-computer runs in the foreground/);
    }
  });
});

describeLua('detached jobs (lua-tools)', () => {
  test('exec-lua detach: a job id at once, output from a cursor, the result when done', T, async (t) => {
    const bridge = await bridgeFor(t);
    const c = useComputer(t, { id: 4, url: bridge.linkUrl, timeScale: 0.01 });
    await c.waitForOutput('waiting for requests');
    const code = 'for i = 1, 5 do print("step " .. i) sleep(5) end return "finished", 42';
    const started = await callTool(bridge, 'exec-lua', { computerId: 4, code, detach: true });
    assert.equal(started.isError, undefined, text(started));
    const job = started.structuredContent.job;
    assert.match(job, /^[A-Za-z0-9_-]{22}$/);
    assert.match(text(started), /^Started job .* \(exec-lua, detached\)/);

    let cursor = 0;
    let output = '';
    const final = await until(async () => {
      const r = await callTool(bridge, 'job-status', { computerId: 4, job, cursor });
      assert.equal(r.isError, undefined, text(r));
      assert.ok(r.structuredContent.cursor >= cursor);
      output += r.structuredContent.output;
      cursor = r.structuredContent.cursor;
      return r.structuredContent.state === 'done' ? r : null;
    }, 'the job finished');
    assert.equal(output, 'step 1\nstep 2\nstep 3\nstep 4\nstep 5\n');
    assert.equal(final.structuredContent.ok, true);
    assert.deepEqual(final.structuredContent.returns, [{ type: 'string', value: 'finished' }, { type: 'number', value: 42 }]);
    assert.match(text(final), /=> "finished", 42\n\[job .*: done; cursor 35\]$/);

    // From the start again: everything; past the end: nothing.
    assert.equal((await callTool(bridge, 'job-status', { computerId: 4, job, cursor: 0 })).structuredContent.output, output);
    assert.equal((await callTool(bridge, 'job-status', { computerId: 4, job, cursor: 999 })).structuredContent.output, '');

    const unknown = await callTool(bridge, 'job-status', { computerId: 4, job: 'nope' });
    assert.equal(unknown.isError, true);
    assert.match(text(unknown), /no job nope on this computer \(jobs do not survive a reboot/);
  });

  test('run-program detach, the job list, job-cancel, a failing job, and output beyond what is kept', T, async (t) => {
    const bridge = await bridgeFor(t);
    const files = { 'forever.lua': 'local n = 0 while true do n = n + 1 print("tick " .. n) sleep(1) end\n' };
    const c = useComputer(t, { id: 4, url: bridge.linkUrl, timeScale: 0.01, files });
    await c.waitForOutput('waiting for requests');
    const started = await callTool(bridge, 'run-program', { computerId: 4, command: 'forever', detach: true });
    assert.equal(started.isError, undefined, text(started));
    const job = started.structuredContent.job;
    const failing = (await callTool(bridge, 'exec-lua', { computerId: 4, code: 'sleep(1) error("boom", 0)', detach: true })).structuredContent.job;

    const list = await until(async () => {
      const r = await callTool(bridge, 'job-status', { computerId: 4 });
      return r.structuredContent.jobs.some((j) => j.state === 'failed') ? r : null;
    }, 'the failing job failed');
    assert.deepEqual(list.structuredContent.jobs.map((j) => [j.job, j.kind, j.state]), [
      [job, 'run-program', 'running'],
      [failing, 'exec-lua', 'failed'],
    ]);
    const failed = await callTool(bridge, 'job-status', { computerId: 4, job: failing });
    assert.equal(failed.structuredContent.error, 'boom');
    assert.match(text(failed), /error: boom/);

    await until(async () => (await callTool(bridge, 'job-status', { computerId: 4, job })).structuredContent.output.includes('tick 3'), 'ticks');
    const cancel = await callTool(bridge, 'job-cancel', { computerId: 4, job });
    assert.equal(text(cancel), `Job ${job} is cancelled.`);
    await c.waitForOutput('cancelled job');
    const after = await callTool(bridge, 'job-status', { computerId: 4, job });
    assert.equal(after.structuredContent.state, 'cancelled');
    const total = after.structuredContent.outputBytes;
    await pause(100);
    assert.equal((await callTool(bridge, 'job-status', { computerId: 4, job })).structuredContent.outputBytes, total, 'no output after the cancel');
    const again = await callTool(bridge, 'job-cancel', { computerId: 4, job: failing });
    assert.match(text(again), /had already ended \(failed\)/);

    // 200,000 bytes of output: the computer keeps the last 64 KiB; reading from 0 says what was dropped.
    const big = (await callTool(bridge, 'exec-lua', { computerId: 4, code: 'for i = 1, 2000 do print(string.rep("x", 99)) if i % 100 == 0 then sleep(0) end end', detach: true })).structuredContent.job;
    const done = await until(async () => {
      const r = await callTool(bridge, 'job-status', { computerId: 4, job: big, cursor: 0 });
      return r.structuredContent.state === 'done' ? r : null;
    }, 'the big job finished');
    assert.equal(done.structuredContent.outputBytes, 200000);
    assert.equal(done.structuredContent.skipped, 200000 - 65536);
    let cursor = done.structuredContent.cursor;
    let got = done.structuredContent.output.length;
    let more = done.structuredContent.more;
    while (more) {
      const r = await callTool(bridge, 'job-status', { computerId: 4, job: big, cursor });
      got += r.structuredContent.output.length;
      cursor = r.structuredContent.cursor;
      more = r.structuredContent.more;
    }
    assert.equal(got, 65536);
    assert.equal(cursor, 200000);
  });

  test('bug: job-status without a job listed every job whole, so with a 1,024-byte frame limit (CC_MAX_FRAME_BYTES) the list was over it and the bridge closed the link (1009)', T, async (t) => {
    const bridge = await bridgeFor(t, { CC_MAX_FRAME_BYTES: '1024' });
    const c = useComputer(t, { id: 4, url: bridge.linkUrl, timeScale: 0.01 });
    await c.waitForOutput('waiting for requests');
    // 16 jobs (the most kept) whose "what" (the code's first 60 bytes) is 30 é: 180 bytes each as JSON escapes
    const jobs = [];
    for (let i = 0; i < 16; i++) {
      const r = await callTool(bridge, 'exec-lua', { computerId: 4, code: `--${'é'.repeat(30)}\nos.pullEvent("never")`, detach: true });
      assert.equal(r.isError, undefined, text(r));
      jobs.push(r.structuredContent.job);
    }
    const list = await callTool(bridge, 'job-status', { computerId: 4 });
    assert.equal(list.isError, undefined, text(list));
    const { jobs: listed, omitted } = list.structuredContent;
    assert.ok(listed.length >= 1 && listed.length < 16, `${listed.length} jobs listed`);
    assert.deepEqual(listed.map((j) => j.job), jobs.slice(0, listed.length), 'the oldest first');
    assert.equal(omitted, 16 - listed.length);
    assert.match(text(list), new RegExp(`\\(${omitted} more jobs left out to fit the frame limit\\)$`));
    assert.match(text(await callTool(bridge, 'probe-computers')), /pong from 4/, 'the link is still up');
    assert.doesNotMatch(c.output, /link closed/);
  });

  test('a job outlives its link: the relinked computer still reports it, and it kept running', T, async (t) => {
    const first = await startBridge(loadConfig({ MCP_PORT: '0', CC_LINK_PORT: '0', LOG_LEVEL: 'error' }));
    const port = new URL(first.linkUrl).port;
    const files = { 'forever.lua': 'local n = 0 while true do n = n + 1 print("tick " .. n) sleep(1) end\n' };
    const c = useComputer(t, { id: 4, url: first.linkUrl, timeScale: 0.01, files });
    await c.waitForOutput('waiting for requests');
    const job = (await callTool(first, 'run-program', { computerId: 4, command: 'forever', detach: true })).structuredContent.job;
    const before = (await callTool(first, 'job-status', { computerId: 4, job })).structuredContent.outputBytes;
    const mark = c.output.length;
    await first.close(100);
    await c.waitForOutput('the bridge is shutting down', 10000, mark);

    const second = await bridgeFor(t, { CC_LINK_PORT: port });
    await c.waitForOutput('waiting for requests', 30000, mark);
    assert.match(c.output.slice(mark), /linked as 4 \(Label: null\)\n1 detached job\(s\) still running; job-status lists them\n/);
    const list = await callTool(second, 'job-status', { computerId: 4 });
    assert.deepEqual(list.structuredContent.jobs.map((j) => [j.job, j.state]), [[job, 'running']]);
    const now = await until(async () => {
      const r = await callTool(second, 'job-status', { computerId: 4, job });
      return r.structuredContent.outputBytes > before ? r : null;
    }, 'more output');
    assert.match(now.structuredContent.output, /^tick 1\ntick 2\n/);
    assert.doesNotMatch(c.output, /abandoned/);
    await callTool(second, 'job-cancel', { computerId: 4, job });
  });
});
