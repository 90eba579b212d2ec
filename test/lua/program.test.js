// The computer program (dist/mcp-computer.lua, joined from lua/mcp-computer/ by npm run build)
// as a program: that it is valid CC Lua, its command
// line, settings, startup files, and every failure it explains.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { COLOURS, PROGRAM, REPO, useComputer } from './computer.js';
import { closedPort, startFakeBridge } from './fake-bridge.js';
import { LUAC, describeLua } from './lua-env.js';

const T = { timeout: 30000 };
const source = readFileSync(PROGRAM, 'utf8');

/** Globals a program may use on CC:Tweaked (CC APIs and Lua's base library as CC ships it). */
const CC_GLOBALS = new Set([
  // Lua base library as in CC
  '_G', '_ENV', 'assert', 'error', 'getmetatable', 'ipairs', 'load', 'next', 'pairs', 'pcall',
  'print', 'rawequal', 'rawget', 'rawlen', 'rawset', 'select', 'setmetatable', 'tonumber',
  'tostring', 'type', 'xpcall', 'coroutine', 'math', 'string', 'table', 'debug', 'bit32',
  // CC
  'arg', 'colors', 'colours', 'fs', 'http', 'os', 'printError', 'write', 'read', 'sleep',
  'settings', 'shell', 'multishell', 'term', 'textutils', 'parallel', 'peripheral', 'keys',
  'require', 'package', 'window', 'vector', 'rednet', 'turtle', 'io',
  // what the computer is (identity): pocket and commands exist only on those kinds; _HOST and
  // _CC_VERSION are CC's version strings
  'pocket', 'commands', '_HOST', '_CC_VERSION',
]);

describeLua('mcp-computer.lua as CC Lua', () => {
  test('luac5.2 -p accepts it', () => {
    execFileSync(LUAC, ['-p', PROGRAM]);
  });

  test('reads only globals that exist on CC and defines none', () => {
    const listing = execFileSync(LUAC, ['-l', '-l', '-p', PROGRAM], { encoding: 'utf8', maxBuffer: 64 << 20 });
    const read = new Set();
    const written = new Set();
    for (const m of listing.matchAll(/\t(GETTABUP|SETTABUP)\s.*; _ENV "([^"]+)"/g)) {
      (m[1] === 'GETTABUP' ? read : written).add(m[2]);
    }
    assert.ok(read.has('textutils') && read.has('http'), 'the listing was parsed');
    assert.deepEqual([...read].filter((g) => !CC_GLOBALS.has(g)), []);
    assert.deepEqual([...written], []);
    // io (CC's reduced io library) is read only to make io.read fail at once inside exec-lua chunks.
  });

  test('it is the parts in lua/mcp-computer/ joined, core first, each other part in its own block', () => {
    const parts = readdirSync(path.join(REPO, 'lua', 'mcp-computer')).filter((f) => f.endsWith('.lua'));
    assert.ok(parts.length >= 4, parts.join());
    const core = readFileSync(path.join(REPO, 'lua', 'mcp-computer', 'core.lua'), 'utf8');
    assert.ok(source.startsWith(core), 'core.lua comes first, at the top level');
    for (const part of parts.filter((f) => f !== 'core.lua')) {
      const text = readFileSync(path.join(REPO, 'lua', 'mcp-computer', part), 'utf8');
      assert.ok(source.includes(`\ndo -- lua/mcp-computer/${part}\n\n${text}end\n`), part);
    }
  });

  test('the main chunk keeps far fewer than Lua\'s 200 locals live at once (each part ends its own)', () => {
    const listing = execFileSync(LUAC, ['-l', '-l', '-p', PROGRAM], { encoding: 'utf8', maxBuffer: 64 << 20 });
    const main = listing.slice(listing.indexOf('main <'));
    const block = main.slice(main.indexOf('locals ('), main.indexOf('upvalues ('));
    const ranges = [...block.matchAll(/^\t\d+\t\S+\t(\d+)\t(\d+)$/gm)].map((m) => [Number(m[1]), Number(m[2])]);
    assert.ok(ranges.length > 100, `${ranges.length} locals listed`);
    let most = 0;
    for (const [start] of ranges) most = Math.max(most, ranges.filter(([s, e]) => s <= start && start < e).length);
    // One file of 2,600 lines had 148 live at the end; the joined parts about 70.
    assert.ok(most <= 100, `${most} locals live at once`);
  });

  test('uses no syntax or library CC lacks (//, bitwise operators, goto, utf8)', () => {
    // Strip comments and string literals, then look at the code that is left.
    const code = source
      .replace(/--\[(=*)\[[\s\S]*?\]\1\]/g, '')
      .replace(/--[^\n]*/g, '')
      .replace(/"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'/g, '""');
    assert.ok(code.includes('local function'), 'stripping left the code');
    assert.doesNotMatch(code, /\/\//);
    assert.doesNotMatch(code, /[&|]|<<|>>|~(?!=)/);
    assert.doesNotMatch(code, /\bgoto\b|\butf8\s*\./);
    assert.match(source, /^local VERSION = "\d+\.\d+\.\d+"$/m);
  });
});

describeLua('command line', () => {
  test('--help, -help and help print usage and options', T, async (t) => {
    for (const flag of ['--help', '-help', 'help']) {
      const c = useComputer(t, { args: [flag] });
      const { code, output } = await c.waitForExit();
      assert.equal(code, 0, output);
      assert.match(output, /^Usage:\nmcp-computer <ws-url> \[options\]\nmcp-computer -url <ws-url>/);
      assert.match(output, /--once/);
      assert.match(output, /set mcp\.url ws:\/\//);
      assert.deepEqual(c.linesIn(COLOURS.red), []);
    }
  });

  test('--version, -version and version print the version constant', T, async (t) => {
    const version = source.match(/^local VERSION = "([^"]+)"/m)[1];
    for (const flag of ['--version', '-version', 'version']) {
      const c = useComputer(t, { args: [flag] });
      const { code, output } = await c.waitForExit();
      assert.equal(code, 0);
      assert.equal(output, `mcp-computer v${version}\n`);
    }
  });

  test('no URL and no saved one: usage in red, error exit', T, async (t) => {
    const c = useComputer(t, {});
    const { code, output } = await c.waitForExit();
    assert.equal(code, 1);
    assert.equal(output, [
      'Usage:',
      'mcp-computer <ws-url> [options]',
      'mcp-computer -url <ws-url> [options]',
      'mcp-computer startup <ws-url> [options]',
      'mcp-computer startup off',
      'mcp-computer status | stop',
      'mcp-computer --help | --version',
      '',
    ].join('\n'));
    assert.equal(c.linesIn(COLOURS.red).length, 7);
  });

  test('usage is built from the name the program runs under', T, async (t) => {
    const c = useComputer(t, { programPath: 'programs/link.lua', command: 'programs/link' });
    const { code, output } = await c.waitForExit();
    assert.equal(code, 1);
    assert.match(output, /^Usage:\nlink <ws-url> \[options\]\nlink -url <ws-url>/);
  });

  test('unknown options and bad values are refused with usage', T, async (t) => {
    const cases = [
      [['--frobnicate'], /Unknown option: --frobnicate/],
      [['ws://a:1', '--max-frame', '12'], /--max-frame needs a whole number of bytes >= 1024/],
      [['-url'], /-url needs a URL/],
      [['ws://a:1', 'ws://b:2'], /Too many arguments/],
      [['http://example.com:3001'], /Not a WebSocket URL: http:\/\/example\.com:3001/],
    ];
    for (const [args, message] of cases) {
      const c = useComputer(t, { args });
      const { code, output } = await c.waitForExit();
      assert.equal(code, 1, output);
      assert.match(output, message);
      assert.match(output, /Usage:/);
    }
  });

  test('-url <ws-url> and a bare host:port both connect', T, async (t) => {
    const bridge = await startFakeBridge();
    t.after(() => bridge.close());
    const a = useComputer(t, { id: 1, args: ['-url', bridge.url] });
    await a.waitForOutput('waiting for requests');
    const b = useComputer(t, { id: 2, args: [bridge.url.replace('ws://', '')] });
    await b.waitForOutput(`connecting to ${bridge.url}\n`);
    await b.waitForOutput('waiting for requests');
    assert.deepEqual((await Promise.all(bridge.links.map((l) => l.hello))).map((h) => h.computerId).sort(), [1, 2]);
  });

  test('with no argument the URL saved in mcp.url is used', T, async (t) => {
    const bridge = await startFakeBridge();
    t.after(() => bridge.close());
    const c = useComputer(t, { settings: { 'mcp.url': bridge.url } });
    await c.waitForOutput(`mcp-computer v0.1.0 connecting to ${bridge.url}\n`);
    await c.waitForOutput('waiting for requests');
    const link = await bridge.link(0);
    assert.equal((await link.hello).type, 'hello');
  });
});

describeLua('startup files', () => {
  test('startup <url> --foreground writes /startup/mcp-computer.lua, which links at boot', T, async (t) => {
    const bridge = await startFakeBridge();
    t.after(() => bridge.close());
    const setup = useComputer(t, { args: ['startup', bridge.url, '--foreground', '--no-exec'], files: { 'startup/00-other.lua': '-- keep me\n' } });
    const { code, output } = await setup.waitForExit();
    assert.equal(code, 0, output);
    assert.match(output, /^Wrote \/startup\/mcp-computer\.lua:\nat boot it runs \/mcp-computer\.lua ws:\/\/127\.0\.0\.1:\d+ --no-exec\n$/);
    const file = readFileSync(path.join(setup.root, 'startup', 'mcp-computer.lua'), 'utf8');
    assert.match(file, /^-- Written by "mcp-computer startup"/);
    assert.ok(file.includes(`shell.run("/mcp-computer.lua", "${bridge.url}", "--no-exec")`), file);
    assert.equal(readFileSync(path.join(setup.root, 'startup', '00-other.lua'), 'utf8'), '-- keep me\n');

    // Boot: run the startup file the way CC's shell would.
    const boot = useComputer(t, { command: 'startup/mcp-computer', files: { 'startup/mcp-computer.lua': file } });
    await boot.waitForOutput('waiting for requests');
    const link = await bridge.link(0);
    const res = await link.exec('return 1');
    assert.equal(res.error, 'exec-lua is disabled on this computer', 'the startup file passed --no-exec on');
  });

  test('startup creates /startup when it is missing', T, async (t) => {
    const c = useComputer(t, { args: ['startup', 'ws://10.0.0.5:3001'] });
    assert.equal((await c.waitForExit()).code, 0);
    assert.ok(existsSync(path.join(c.root, 'startup', 'mcp-computer.lua')));
  });

  test('startup off removes only our file', T, async (t) => {
    const files = { 'startup/mcp-computer.lua': 'shell.run("x")\n', 'startup/other.lua': 'print(1)\n' };
    const c = useComputer(t, { args: ['startup', 'off'], files });
    const { code, output } = await c.waitForExit();
    assert.equal(code, 0);
    assert.equal(output, 'Removed /startup/mcp-computer.lua; the link no longer starts at boot.\n');
    assert.ok(!existsSync(path.join(c.root, 'startup', 'mcp-computer.lua')));
    assert.ok(existsSync(path.join(c.root, 'startup', 'other.lua')));

    const again = useComputer(t, { args: ['startup', 'off'] });
    assert.equal((await again.waitForExit()).output, 'Nothing to remove: /startup/mcp-computer.lua does not exist.\n');
  });

  test('startup refuses when /startup is a file', T, async (t) => {
    const c = useComputer(t, { args: ['startup', 'ws://10.0.0.5:3001'], files: { startup: 'print(1)\n' } });
    const { code, output } = await c.waitForExit();
    assert.equal(code, 1);
    assert.match(output, /\/startup is a file/);
    assert.equal(readFileSync(path.join(c.root, 'startup'), 'utf8'), 'print(1)\n');
  });

  test('bug: startup without a URL used no saved mcp.url (the help says "Without a URL the setting mcp.url is used"); now it writes that URL, and without one it is still a usage error', T, async (t) => {
    const c = useComputer(t, { args: ['startup'], settings: { 'mcp.url': 'ws://10.0.0.5:3001' } });
    const { code, output } = await c.waitForExit();
    assert.equal(code, 0, output);
    assert.equal(output, 'Wrote /startup/mcp-computer.lua:\nat boot it runs /mcp-computer.lua ws://10.0.0.5:3001 --background --from-startup\n');
    const file = readFileSync(path.join(c.root, 'startup', 'mcp-computer.lua'), 'utf8');
    assert.ok(file.includes('shell.run("/mcp-computer.lua", "ws://10.0.0.5:3001", "--background", "--from-startup")'), file);
    // options after startup leave the URL to the setting too
    const fg = useComputer(t, { args: ['startup', '--foreground'], settings: { 'mcp.url': '10.0.0.6:3001' } });
    const ran = await fg.waitForExit();
    assert.equal(ran.code, 0, ran.output);
    assert.equal(ran.output, 'Wrote /startup/mcp-computer.lua:\nat boot it runs /mcp-computer.lua ws://10.0.0.6:3001\n');
  });

  test('startup without a URL is a usage error', T, async (t) => {
    const c = useComputer(t, { args: ['startup'] });
    const { code, output } = await c.waitForExit();
    assert.equal(code, 1);
    assert.match(output, /startup needs a URL or off \(or set mcp\.url\)\nUsage:/);
  });
});

describeLua("CC's failures explained", () => {
  test('no http API: names http.enabled in computercraft-server.toml', T, async (t) => {
    const c = useComputer(t, { url: 'ws://127.0.0.1:1', httpDisabled: true });
    const { code } = await c.waitForExit();
    assert.equal(code, 1);
    const red = c.linesIn(COLOURS.red).join(' ');
    assert.match(red, /HTTP is disabled/);
    assert.match(red, /enabled = true in the \[http\] section of computercraft-server\.toml/);
    assert.match(red, /\(http\.enabled\)/);
  });

  test('websocket disabled (http.websocket throws): names websocket_enabled', T, async (t) => {
    const c = useComputer(t, { url: 'ws://127.0.0.1:1', websocket: 'disabled' });
    const { code } = await c.waitForExit();
    assert.equal(code, 1);
    const red = c.linesIn(COLOURS.red).join(' ');
    assert.match(red, /WebSocket connections are disabled on this server/);
    assert.match(red, /websocket_enabled = true in the \[http\] section/);
  });

  test('http.websocket missing: says websockets are disabled or CC is too old', T, async (t) => {
    const c = useComputer(t, { url: 'ws://127.0.0.1:1', websocket: 'missing' });
    const { code } = await c.waitForExit();
    assert.equal(code, 1);
    const red = c.linesIn(COLOURS.red).join(' ');
    assert.match(red, /http\.websocket is missing/);
    assert.match(red, /websocket_enabled = false/);
  });

  test('could not connect (nothing listening), then backoff 1, 2, 4 ... capped at 30 s, each wait from the upper half of its step', T, async (t) => {
    const port = await closedPort();
    const c = useComputer(t, { url: `ws://127.0.0.1:${port}`, timeScale: 0.0005 });
    const { end } = await c.waitForOutput(/reconnecting to [^\n]* \(attempt 8\)\n/, 20000);
    c.terminate();
    await c.waitForExit();
    const lines = c.output.slice(0, end).split('\n');
    assert.equal(lines[0], `mcp-computer v0.1.0 connecting to ws://127.0.0.1:${port}`);
    assert.equal(lines[1], 'could not connect: Could not connect');
    const steps = [1, 2, 4, 8, 16, 30, 30];
    const waits = lines.filter((l) => l.startsWith('retrying in')).map((l) => Number(l.match(/[\d.]+/)[0]));
    assert.equal(waits.length, steps.length, String(waits));
    waits.forEach((w, i) => assert.ok(w >= steps[i] / 2 && w <= steps[i], `wait ${i + 1}: ${w} s for the ${steps[i]} s step`));
    assert.deepEqual(
      lines.filter((l) => l.startsWith('reconnecting')).map((l) => l.match(/attempt (\d+)/)[1]),
      ['2', '3', '4', '5', '6', '7', '8'],
    );
    assert.ok(c.linesIn(COLOURS.red).includes('could not connect: Could not connect'));
  });

  test('Domain not permitted: explains the private-address rule once and points to the README', T, async (t) => {
    const c = useComputer(t, { url: 'ws://192.168.1.20:3001', failure: 'Domain not permitted', timeScale: 0.001 });
    await c.waitForOutput('reconnecting to ws://192.168.1.20:3001 (attempt 3)');
    c.terminate();
    await c.waitForExit();
    const red = c.linesIn(COLOURS.red).join('\n');
    assert.match(red, /could not connect: Domain not permitted/);
    assert.match(red, /blocks private and loopback addresses/);
    assert.match(red, /README section "Allowing the bridge host"/);
    assert.equal(c.output.split('private and loopback').length, 2, 'the hint is printed once');
  });

  test('--once: a failed connect exits with an error status', T, async (t) => {
    const c = useComputer(t, { url: 'ws://192.168.1.20:3001', args: ['--once'], failure: 'Domain not permitted' });
    const { code, output } = await c.waitForExit();
    assert.equal(code, 1);
    assert.match(output, /could not connect: Domain not permitted/);
    assert.doesNotMatch(output, /retrying/);
  });

  test('a failure http.websocket reports at once (false, message) is retried too', T, async (t) => {
    const c = useComputer(t, { url: 'ws://example.invalid:3001', syncFailure: 'Unknown host', timeScale: 0.001 });
    await c.waitForOutput('reconnecting to ws://example.invalid:3001 (attempt 2)');
    c.terminate();
    assert.equal((await c.waitForExit()).code, 0);
    assert.match(c.output, /could not connect: Unknown host/);
  });

  test('older CC without http.websocketAsync: the blocking http.websocket is used', T, async (t) => {
    const bridge = await startFakeBridge();
    t.after(() => bridge.close());
    const c = useComputer(t, { url: bridge.url, noAsync: true });
    await c.waitForOutput('waiting for requests');
    const link = await bridge.link(0);
    assert.equal((await link.request('ping')).result, 'pong from 1 (Label: null)');
  });

  test('bug: older CC without http.websocketAsync: events during a reconnect were thrown away by the blocking http.websocket, so a detached job waiting for one never went on', T, async (t) => {
    const bridge = await startFakeBridge();
    t.after(() => bridge.close());
    const c = useComputer(t, { url: bridge.url, noAsync: true });
    await c.waitForOutput('waiting for requests');
    const link = await bridge.link(0);
    const code = 'os.pullEvent("go") sleep(1) return "slept"';
    const started = await link.request('exec-lua', { code, detach: true });
    assert.equal(started.ok, true, JSON.stringify(started));
    // The link drops; the reconnect stays pending while the job gets its event and its timer.
    c.opts.holdConnect = true;
    link.close(1000);
    while (c.held.length === 0) await new Promise((r) => setTimeout(r, 5));
    c.queueEvent('go');
    c.releaseConnects();
    const again = await bridge.link(1);
    await again.hello;
    let status;
    for (let i = 0; i < 200; i++) {
      status = await again.request('job-status', { job: started.id });
      if (status.ok && status.result.state !== 'running') break;
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(status.result.state, 'done', JSON.stringify(status));
    assert.deepEqual(status.result.returns, [{ type: 'string', value: 'slept' }]);
  });
});
