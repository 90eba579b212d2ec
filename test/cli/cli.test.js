// cc-mcp spawned for real against a test bridge: commands, output, exit statuses, auth, Ctrl-C.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readFile } from 'node:fs/promises';
import { linkComputer, pongText, withBridge } from '../helpers.js';
import { runCli } from '../../dist/cli/run.js';
import { BUILTIN_TOOLS } from '../../dist/tools/builtins.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const VERSION = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;
const OURS = ['CC_MCP_URL', 'CC_MCP_TOKEN', 'MCP_AUTH_TOKEN'];

/** Spawns cc-mcp; `env` adds to a clean environment (none of our variables from the test runner). */
function start(args, { env = {}, input } = {}) {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !OURS.includes(k)));
  const child = spawn(process.execPath, ['dist/cli/index.js', ...args], { cwd: ROOT, env: { ...base, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  const out = { stdout: '', stderr: '' };
  child.stdout.setEncoding('utf8').on('data', (c) => (out.stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c) => (out.stderr += c));
  child.stdin.end(input);
  const done = once(child, 'exit').then(([code]) => ({ code, ...out }));
  return Object.assign(child, { done });
}

/** Runs cc-mcp in this process (same code, same HTTP): much faster than a spawn per case. */
async function cli(args, { env = {}, input = '' } = {}) {
  const out = { stdout: '', stderr: '' };
  const code = await runCli(
    args,
    {
      out: (t) => (out.stdout += t),
      err: (t) => (out.stderr += t),
      readFile: (file) => readFile(path.resolve(ROOT, file), 'utf8'),
      readStdin: async () => input,
      env,
      signal: new AbortController().signal,
    },
    VERSION,
  );
  return { code, ...out };
}
const spawned = (args, options) => start(args, options).done;
const at = (bridge) => ['--url', bridge.mcpUrl];

test('usage errors exit 2 with one line on stderr; --help and --version exit 0', async () => {
  const help = await spawned(['--help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^Usage: cc-mcp \[--url URL\] \[--json\] <command>/);
  assert.match(help.stdout, /Exit status: 0 ok, 1 the tool answered an error \(isError\), 2 usage, 3 bridge unreachable/);
  assert.deepEqual(await spawned(['--version']), { code: 0, stdout: `cc-mcp ${VERSION}\n`, stderr: '' });
  assert.deepEqual(await spawned(['frob']), { code: 2, stdout: '', stderr: 'cc-mcp: unknown command "frob" (cc-mcp --help shows the usage)\n' });
  const cases = [
    [[], /no command given/],
    [['frob'], /unknown command "frob"/],
    [['--frob', 'tools'], /unknown option --frob/],
    [['--url'], /--url needs a value/],
    [['--url=ftp://x/mcp', 'tools'], /--url must be an http\(s\) URL/],
    [['--url', 'not a url', 'tools'], /--url must be an http\(s\) URL/],
    [['tools', 'extra'], /tools takes no arguments/],
    [['probe', 'x'], /probe takes no arguments/],
    [['health', 'x'], /health takes no arguments/],
    [['call'], /call needs a tool name/],
    [['call', 'exec-lua', '{"code": '], /the arguments are not valid JSON/],
    [['call', 'exec-lua', '[1]'], /expected key=value or key:=JSON, got "\[1\]"/],
    [['call', 'exec-lua', '{}', 'x=1'], /expected key=value/],
    [['call', 'exec-lua', ' {"a": [1]} extra'], /not valid JSON/],
    [['exec'], /exec needs a computer id or label/],
    [['exec', '1'], /exactly one of/],
    [['exec', '1', '-e'], /exactly one of/],
    [['exec', '1', 'a.lua', 'b.lua'], /exactly one of/],
    [['exec', '1', 'no-such-file.lua'], /cannot read no-such-file.lua: no such file \(ENOENT\)/],
  ];
  for (const [args, message] of cases) {
    const r = await cli(['--url', 'http://127.0.0.1:9/mcp', ...args]);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, message, args.join(' '));
    assert.equal(r.stderr.split('\n').filter(Boolean).length, 1, args.join(' '));
    assert.match(r.stderr, /^cc-mcp: /);
  }
});

test('bug: exec with a file it cannot read said only the error code ("cannot read dig.lua: ENOENT"); now what it means, the code kept', async () => {
  for (const [file, why] of [['no-such-file.lua', 'no such file (ENOENT)'], ['test', 'it is a folder, not a file (EISDIR)']]) {
    const r = await cli(['--url', 'http://127.0.0.1:9/mcp', 'exec', '1', file]);
    assert.deepEqual(r, { code: 2, stdout: '', stderr: `cc-mcp: cannot read ${file}: ${why}\n` }, file);
  }
});

test('tools, probe and health read like the tool text; --json prints the raw result', () =>
  withBridge({}, async (bridge) => {
    const tools = await cli([...at(bridge), 'tools']);
    const width = Math.max(...BUILTIN_TOOLS.map((t) => t.name.length));
    const listing = BUILTIN_TOOLS.map((t) => `${t.name.padEnd(width)}  ${t.title}\n`).join('');
    assert.deepEqual(tools, { code: 0, stdout: listing, stderr: '' });
    assert.match(tools.stdout, /^probe-computers +Probe linked computers\nexec-lua +Run Lua on a computer\n/);
    const raw = await cli([...at(bridge), '--json', 'tools']);
    assert.deepEqual(JSON.parse(raw.stdout).map((t) => t.name), BUILTIN_TOOLS.map((t) => t.name));

    assert.deepEqual(await cli([...at(bridge), 'probe']), { code: 0, stdout: 'No computers connected.\n', stderr: '' });
    assert.deepEqual(await cli([...at(bridge), 'health']), { code: 0, stdout: 'bridge is up; 0 computers linked\n', stderr: '' });
    const a = await linkComputer(bridge, { computerId: 3, computerLabel: 'miner' });
    assert.deepEqual(await cli([...at(bridge), 'probe']), { code: 0, stdout: `${pongText(3, 'miner')}\n`, stderr: '' });
    const probeJson = JSON.parse((await cli(['probe', '--json', ...at(bridge)])).stdout);
    assert.equal(probeJson.structuredContent.computers[0].status, 'pong');
    assert.deepEqual(await cli([...at(bridge), 'health']), { code: 0, stdout: 'bridge is up; 1 computer linked\n', stderr: '' });
    assert.deepEqual(JSON.parse((await cli([...at(bridge), 'health', '--json'])).stdout), { ok: true, computers: 1, link: { state: 'listening', address: new URL(bridge.linkUrl).host } });
    // CC_MCP_URL stands in for --url
    assert.equal((await cli(['probe'], { env: { CC_MCP_URL: bridge.mcpUrl } })).stdout, `${pongText(3, 'miner')}\n`);
    await a.close();
  }));

test('exec: by id or label, from -e, a file or stdin; a Lua error exits 1 with the tool text', () =>
  withBridge({}, async (bridge) => {
    const seen = [];
    const c = await linkComputer(bridge, {
      computerId: 5,
      computerLabel: 'base',
      onRequest: (frame) => {
        seen.push(frame.params);
        if (frame.params.code === 'error()') return { ok: false, error: 'boom', result: { output: 'before\n', returns: [], truncated: false } };
        return { ok: true, result: { output: 'hi\n', returns: [{ type: 'number', value: 2 }], truncated: false } };
      },
    });
    const dir = mkdtempSync(path.join(tmpdir(), 'cc-cli-'));
    const file = path.join(dir, 'job.lua');
    writeFileSync(file, 'print("hi") return 2\n');
    try {
      assert.deepEqual(await spawned([...at(bridge), 'exec', '5', '-e', 'print("hi") return 2']), { code: 0, stdout: 'hi\n=> 2\n', stderr: '' });
      assert.equal((await spawned([...at(bridge), 'exec', 'base', file])).code, 0);
      assert.equal((await spawned([...at(bridge), 'exec', 'base', '-'], { input: 'return 2 -- stdin' })).code, 0);
      assert.equal((await cli([...at(bridge), 'exec', '5', '-e', '--json'])).code, 0, '-e takes the next argument as code');
      assert.deepEqual(seen, [
        { code: 'print("hi") return 2' },
        { code: 'print("hi") return 2\n' },
        { code: 'return 2 -- stdin' },
        { code: '--json' },
      ]);
      const failed = await spawned([...at(bridge), 'exec', '5', '-e', 'error()']);
      assert.deepEqual(failed, { code: 1, stdout: 'before\nerror: boom\n', stderr: 'cc-mcp: exec-lua answered with an error\n' });
      const missing = await cli([...at(bridge), 'exec', '9', '-e', 'x']);
      assert.equal(missing.code, 1);
      assert.match(missing.stdout, /No linked computer has id 9/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await c.close();
    }
  }));

test('call: JSON arguments, key=value typed by the schema, key:=JSON; unknown tools exit 2', () =>
  withBridge({}, async (bridge) => {
    const seen = [];
    const c = await linkComputer(bridge, {
      computerId: 1,
      onRequest: (frame) => (seen.push(frame.params), { ok: true, result: { output: '', returns: [], truncated: false } }),
    });
    assert.deepEqual(await cli([...at(bridge), 'call', 'exec-lua', '{"computerId": 1, "code": "x = 1"}']), {
      code: 0,
      stdout: '(no output, nothing returned)\n',
      stderr: '',
    });
    // code is a string in the schema, so 123 stays a string; computerId is parsed as JSON
    assert.equal((await cli([...at(bridge), 'call', 'exec-lua', 'computerId=1', 'code=123'])).code, 0);
    assert.equal((await cli([...at(bridge), 'call', 'exec-lua', 'computerId:=1', 'code=a=b', 'timeoutMs=500'])).code, 0);
    assert.deepEqual(seen, [{ code: 'x = 1' }, { code: '123' }, { code: 'a=b' }]);
    const invalid = await cli([...at(bridge), 'call', 'exec-lua', 'computerId=one', 'code=x']);
    assert.equal(invalid.code, 1);
    assert.match(invalid.stdout, /argument "computerId" must be an integer, got a string/);
    const badRaw = await cli([...at(bridge), 'call', 'exec-lua', 'computerId:=one']);
    assert.equal(badRaw.code, 2);
    assert.match(badRaw.stderr, /computerId:= needs a JSON value, got "one"/);
    const unknownPairs = await cli([...at(bridge), 'call', 'nope', 'a=1']);
    assert.deepEqual(unknownPairs, { code: 2, stdout: '', stderr: 'cc-mcp: unknown tool "nope"; cc-mcp tools lists them\n' });
    const unknownJson = await cli([...at(bridge), 'call', 'nope', '{}']);
    assert.equal(unknownJson.code, 2);
    assert.match(unknownJson.stderr, /^cc-mcp: the bridge refused: .*Unknown tool: nope/);
    assert.equal((await cli([...at(bridge), 'call', 'probe-computers'])).code, 0, 'no arguments means {}');
    await c.close();
  }));

test('an unreachable bridge exits 3 with one line; so does something that is not a bridge', async () => {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  for (const command of ['tools', 'probe', 'health']) {
    const r = await cli(['--url', `http://127.0.0.1:${port}/mcp`, command]);
    assert.equal(r.code, 3, `${command}: ${r.stderr}`);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^cc-mcp: cannot reach the bridge at http:\/\/127\.0\.0\.1:\d+/);
    assert.equal(r.stderr.split('\n').filter(Boolean).length, 1);
  }
  await withBridge({}, async (bridge) => {
    // the link listener answers plain text over HTTP
    const notBridge = bridge.linkUrl.replace(/^ws/, 'http');
    const health = await cli(['--url', `${notBridge}/mcp`, 'health']);
    assert.equal(health.code, 3);
    assert.match(health.stderr, /answered HTTP \d+; is this a cc-mcp-bridge\?/);
    assert.equal((await cli(['--url', `${notBridge}/mcp`, 'probe'])).code, 3);
  });
});

test('bug: with no bridge running, cc-mcp said "connection closed before initialize was answered: cannot reach <url>: ECONNREFUSED" (the URL twice, as if the bridge had been reached); now what the code means and what to do', async () => {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  const url = `http://127.0.0.1:${port}/mcp`;
  for (const command of ['tools', 'probe', 'health', 'pins']) {
    const r = await cli(['--url', url, command]);
    assert.equal(r.code, 3, command);
    assert.doesNotMatch(r.stderr, /closed before|cannot reach.*cannot reach/, command);
    const where = command === 'health' || command === 'pins' ? `http://127.0.0.1:${port}` : url;
    assert.equal(r.stderr, `cc-mcp: cannot reach the bridge at ${where}: nothing listens there (ECONNREFUSED). Is the bridge running? Start it (npm start in its folder), or give its MCP endpoint with --url or CC_MCP_URL\n`, command);
  }
  const unresolved = await cli(['--url', 'http://cc-bridge.invalid:3000/mcp', 'probe']);
  assert.equal(unresolved.code, 3);
  assert.match(unresolved.stderr, /^cc-mcp: cannot reach the bridge at http:\/\/cc-bridge\.invalid:3000\/mcp: the host name does not resolve \((ENOTFOUND|EAI_AGAIN)\)\. Is the bridge running\?/);
});

test('bug: an MCP client (here cc-mcp) given the link port instead of the MCP port was told only "This is the cc-mcp-bridge computer link. Connect with a WebSocket, or GET /mcp-computer.lua."; now also where MCP is', () =>
  withBridge({}, async (bridge) => {
    const r = await cli(['--url', `${bridge.linkUrl.replace(/^ws/, 'http')}/mcp`, 'probe']);
    assert.equal(r.code, 3);
    assert.match(r.stderr, /HTTP 404: This is the cc-mcp-bridge computer link\. Connect with a WebSocket, or GET \/mcp-computer\.lua\. MCP clients connect to the MCP endpoint on MCP_PORT instead \(3000 by default: http:\/\/127\.0\.0\.1:3000\/mcp\)\.\n$/);
  }));

test('with MCP_AUTH_TOKEN set, cc-mcp sends CC_MCP_TOKEN (else the first MCP_AUTH_TOKEN) as the bearer token', () =>
  withBridge({ MCP_AUTH_TOKEN: 'cli-token-0123456789abcdef,other-token-0123456789abcdef' }, async (bridge) => {
    const refused = await cli([...at(bridge), 'probe']);
    assert.equal(refused.code, 3);
    assert.match(refused.stderr, /HTTP 401/);
    assert.equal((await cli([...at(bridge), 'probe'], { env: { CC_MCP_TOKEN: 'other-token-0123456789abcdef' } })).code, 0);
    const viaServerVariable = { MCP_AUTH_TOKEN: ' cli-token-0123456789abcdef , other-token-0123456789abcdef' };
    assert.equal((await cli([...at(bridge), 'probe'], { env: viaServerVariable })).code, 0);
    assert.deepEqual(await cli([...at(bridge), 'health'], { env: viaServerVariable }), { code: 0, stdout: 'bridge is up; 0 computers linked\n', stderr: '' });
    assert.deepEqual(await cli([...at(bridge), 'health']), { code: 0, stdout: 'bridge is up (it says more with a valid token: set CC_MCP_TOKEN to one of its MCP_AUTH_TOKEN tokens)\n', stderr: '' });
  }));

test('bug: a bridge that refused cc-mcp\'s token (or its lack of one) was reported as "cannot reach the bridge ...: HTTP 401: {"jsonrpc":...}", and pins as "unauthorized: Unauthorized: send the header Authorization: Bearer <token>"; now it says the bridge refused it and to set CC_MCP_TOKEN', () =>
  withBridge({ MCP_AUTH_TOKEN: 'cli-token-0123456789abcdef' }, async (bridge) => {
    const origin = new URL(bridge.mcpUrl).origin;
    const none = `the bridge at ${bridge.mcpUrl} needs a token (it has MCP_AUTH_TOKEN set) and cc-mcp sent none (HTTP 401): set CC_MCP_TOKEN to one of the bridge's MCP_AUTH_TOKEN tokens`;
    for (const command of ['probe', 'tools']) assert.deepEqual(await cli([...at(bridge), command]), { code: 3, stdout: '', stderr: `cc-mcp: ${none}\n` }, command);
    const wrong = await cli([...at(bridge), 'probe'], { env: { CC_MCP_TOKEN: 'wrong-token-0123456789abcdef' } });
    assert.equal(wrong.code, 3);
    assert.equal(wrong.stderr, `cc-mcp: the bridge at ${bridge.mcpUrl} refused the token cc-mcp sent (CC_MCP_TOKEN, else the first of MCP_AUTH_TOKEN) (HTTP 401): set CC_MCP_TOKEN to one of the bridge's MCP_AUTH_TOKEN tokens\n`);
    for (const command of [['pins'], ['pin-reset', '5']]) {
      const r = await cli([...at(bridge), ...command]);
      assert.equal(r.code, 3, command[0]);
      assert.equal(r.stderr, `cc-mcp: the bridge at ${origin} needs a token (it has MCP_AUTH_TOKEN set) and cc-mcp sent none (HTTP 401): set CC_MCP_TOKEN to one of the bridge's MCP_AUTH_TOKEN tokens\n`, command[0]);
    }
  }));

test('Ctrl-C during exec cancels the call at the bridge: the computer gets a cancel frame; exit 130', () =>
  // a long exec timeout, so the computer hears a cancel only because of the CLI. The CLI sends
  // notifications/cancelled with the Mcp-Session-Id it got at initialize (the call's own connection is
  // busy, so the notice travels on another one) before closing the request: the log line below is
  // written only when the notice matched the call, i.e. the session made it the same client
  withBridge({ CC_EXEC_TIMEOUT_MS: '300000' }, async (bridge) => {
    const c = await linkComputer(bridge, { computerId: 1, onRequest: () => null });
    const child = start([...at(bridge), 'exec', '1', '-e', 'sleep(60)']);
    const request = await c.next((f) => f.type === 'request');
    child.kill('SIGINT');
    assert.deepEqual(await c.next((f) => f.type === 'cancel'), { type: 'cancel', id: request.id });
    const r = await child.done;
    assert.equal(r.code, 130);
    assert.match(r.stderr, /^cc-mcp: interrupted; the call was cancelled at the bridge\n$/);
    assert.ok(bridge.logs.some((l) => /client cancelled request \d+: "cancelled by the caller"/.test(l)));
    await c.close();
  }));
