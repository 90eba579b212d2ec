// Audit: a CC_CONFIG file that nests very deeply, or that is not a regular file, is refused with a
// ConfigFileError naming it, at start and on reload; the bridge neither crashes nor blocks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { writeConfig } from '../config/write.js';
import { loadFileConfig } from '../../dist/config/file.js';
import { rpc, startTestBridge, withBridge } from '../helpers.js';

const DEPTH = 100_000;
const deep = `${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}`;
// a Lua tool whose annotations hold a value 100,000 levels deep (JSON.parse takes any depth)
const deepText = `{"tools":[{"name":"deep","target":"argument","lua":"return 1","annotations":{"x":${deep}}}]}`;
const isTooDeep = (err) => err?.code === 'ERR_CONFIG_FILE' && err.problems.length === 1 && err.problems[0].path === '$' && /nests deeper than 256 levels/.test(err.problems[0].message);

test('bug: a CC_CONFIG value nested 100,000 levels deep crashed the start with a RangeError (stack overflow); now a config error', { timeout: 60_000 }, async () => {
  const file = writeConfig(deepText);
  await assert.rejects(startTestBridge({ CC_CONFIG: file }), (err) => isTooDeep(err));
});

test('bug: POST /reload of a CC_CONFIG nested 100,000 levels deep answered 500 (SIGHUP: an uncaught RangeError killed the bridge); now 422, nothing changed', { timeout: 60_000 }, async () => {
  const file = writeConfig({ tools: [{ name: 'good', target: 'argument', lua: 'return 1' }] });
  await withBridge({ CC_CONFIG: file }, async (bridge) => {
    writeConfig(deepText, file);
    const res = await fetch(new URL('/reload', bridge.mcpUrl), { method: 'POST' });
    assert.equal(res.status, 422);
    const body = await res.json();
    assert.equal(body.ok, false);
    assert.ok(isTooDeep({ code: 'ERR_CONFIG_FILE', problems: body.problems }), JSON.stringify(body.problems));
    const names = (await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).json.result.tools.map((t) => t.name);
    assert.ok(names.includes('good') && !names.includes('deep'));
  });
});

test('a CC_CONFIG nested exactly 256 levels is read; 257 is refused', () => {
  // $ (1) -> tools (2) -> [0] (3) -> annotations (4) -> x: 252 arrays
  const at = (n) => `{"tools":[{"name":"d","target":"argument","lua":"return 1","annotations":{"x":${'['.repeat(n)}${']'.repeat(n)}}}]}`;
  assert.equal(loadFileConfig(writeConfig(at(252))).tools.length, 1);
  assert.throws(() => loadFileConfig(writeConfig(at(253))), isTooDeep);
});

test('bug: a FIFO at CC_CONFIG blocked loadFileConfig (the start, or SIGHUP / POST /reload: the event loop) until something wrote to it; now refused at once', { timeout: 60_000 }, (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cc-config-fifo-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const fifo = path.join(dir, 'bridge.json');
  execFileSync('mkfifo', [fifo]);
  assert.throws(
    () => loadFileConfig(fifo),
    (err) => err.code === 'ERR_CONFIG_FILE' && err.message === `${fifo}: $: is not a regular file (a FIFO, device or directory is never read)`,
  );
  assert.throws(() => loadFileConfig(dir), (err) => err.code === 'ERR_CONFIG_FILE' && /is not a regular file/.test(err.message));
});

test('bug: a CC_CONFIG of gigabytes was read whole (at start, or on SIGHUP / POST /reload with the event loop blocked); now one over 16 MiB is refused unread', { timeout: 60_000 }, async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cc-config-big-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'bridge.json');
  // sparse: 3 GiB of size, no disk; the build before took 65 s and 4.2 GB of memory over it
  execFileSync('truncate', ['-s', '3G', file]);
  const isTooBig = (err) => err?.code === 'ERR_CONFIG_FILE' && err.message === `${file}: $: is 3221225472 bytes; a config file may be at most 16777216 (16 MiB), so it is not read`;
  assert.throws(() => loadFileConfig(file), isTooBig);
  // one byte past the bound is refused; the bound itself is read (and is then not JSON)
  execFileSync('truncate', ['-s', String(16 * 1024 * 1024 + 1), file]);
  assert.throws(() => loadFileConfig(file), (err) => /is 16777217 bytes; a config file may be at most 16777216/.test(err.message));
  execFileSync('truncate', ['-s', String(16 * 1024 * 1024), file]);
  assert.throws(() => loadFileConfig(file), (err) => err.code === 'ERR_CONFIG_FILE' && /not valid JSON/.test(err.message));
  // on reload: 422, the tools kept
  const config = writeConfig({ tools: [{ name: 'good', target: 'argument', lua: 'return 1' }] });
  await withBridge({ CC_CONFIG: config }, async (bridge) => {
    execFileSync('truncate', ['-s', '3G', config]);
    const res = await fetch(new URL('/reload', bridge.mcpUrl), { method: 'POST' });
    assert.equal(res.status, 422);
    const body = await res.json();
    assert.match(body.problems[0].message, /^is 3221225472 bytes; a config file may be at most 16777216/);
    const names = (await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).json.result.tools.map((t) => t.name);
    assert.ok(names.includes('good'));
    rmSync(config);
  });
});

test('bug: MCP_AUTH_TOKEN_FILE or CC_LINK_TOKEN_FILE naming a FIFO blocked the start until something wrote to it, and /dev/zero was read until memory ran out; now refused at once', { timeout: 60_000 }, (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cc-token-file-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const fifo = path.join(dir, 'token');
  execFileSync('mkfifo', [fifo]);
  const big = path.join(dir, 'big');
  execFileSync('truncate', ['-s', '65537', big]);
  for (const name of ['MCP_AUTH_TOKEN_FILE', 'CC_LINK_TOKEN_FILE']) {
    // a child process each: the build before blocked (FIFO) or ran out of memory (/dev/zero) inside loadConfig
    for (const [file, why] of [[fifo, /not a regular file: a FIFO, device or directory is never read/], ['/dev/zero', /not a regular file/], [dir, /not a regular file/], [big, /65537 bytes; a token file may be at most 65536/]]) {
      const run = spawnSync(process.execPath, ['dist/index.js'], { env: { PATH: process.env.PATH, MCP_PORT: '0', CC_LINK_PORT: '0', CC_LINK_HOST: '127.0.0.1', [name]: file }, encoding: 'utf8', timeout: 20_000 });
      assert.equal(run.status, 2, `${name}=${file}: exit ${run.status} (${run.signal ?? ''}) ${run.stderr}`);
      assert.match(run.stderr, new RegExp(`invalid configuration: ${name}="${file.replace(/[/.]/g, '\\$&')}": cannot read the file \\(`));
      assert.match(run.stderr, why);
    }
  }
});
