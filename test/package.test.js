// The package for constrained hosts: the `npm pack` tarball installs with no registry reachable and
// runs as `npx cc-mcp-bridge`; `npm run vendor` writes a folder that runs with nothing installed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { FakeComputer, pongText, until } from './helpers.js';
import { VARIABLES } from '../dist/config.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PKG = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
// nothing listens on port 9 of loopback: any attempt to reach a registry fails at once
const NO_REGISTRY = 'http://127.0.0.1:9/';

/** The environment without our variables, npm's per-run settings or coverage collection. */
function cleanEnv(extra = {}) {
  const keep = Object.entries(process.env).filter(
    ([k]) => !VARIABLES.some((v) => v.name === k) && !/^npm_/i.test(k) && k !== 'NODE_V8_COVERAGE' && k !== 'CC_MCP_URL',
  );
  return { ...Object.fromEntries(keep), ...extra };
}

const scratch = (name) => mkdtempSync(path.join(tmpdir(), `cc-${name}-`));

test('npm pack bundles ws; the tarball installs offline against an empty cache and runs as npx cc-mcp-bridge', { timeout: 180_000 }, async (t) => {
  const dir = scratch('pack');
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const packed = await run('npm', ['pack', '--pack-destination', dir, '--json'], { cwd: ROOT, env: cleanEnv(), timeout: 120_000 });
  const [info] = JSON.parse(packed.stdout);
  assert.deepEqual(info.bundled, ['ws']);
  const files = info.files.map((f) => f.path);
  for (const needed of ['dist/index.js', 'dist/mcp-computer.lua', 'package.json', 'README.md', 'node_modules/ws/package.json', 'node_modules/ws/wrapper.mjs']) {
    assert.ok(files.includes(needed), `${needed} is in the tarball`);
  }
  assert.equal(files.some((f) => f.startsWith('src/') || f.startsWith('test/') || f.endsWith('.map')), false);

  const app = path.join(dir, 'app');
  const cache = path.join(dir, 'empty-cache');
  mkdirSync(app);
  mkdirSync(cache);
  writeFileSync(path.join(app, 'package.json'), '{"name": "offline-host", "version": "1.0.0", "private": true}\n');
  const offline = ['--offline', '--cache', cache, '--registry', NO_REGISTRY];
  await run('npm', ['install', path.join(dir, info.filename), ...offline, '--no-audit', '--no-fund'], { cwd: app, env: cleanEnv(), timeout: 120_000 });
  assert.deepEqual(readdirSync(path.join(app, 'node_modules', 'cc-mcp-bridge', 'node_modules')), ['ws']);
  const { stdout } = await run('npx', [...offline, '--', 'cc-mcp-bridge', '--version'], { cwd: app, env: cleanEnv(), timeout: 120_000 });
  assert.equal(stdout, `cc-mcp-bridge ${PKG.version}\n`);
  const cli = await run('npx', [...offline, '--', 'cc-mcp', '--version'], { cwd: app, env: cleanEnv(), timeout: 120_000 });
  assert.equal(cli.stdout, `cc-mcp ${PKG.version}\n`);
});

/** Runs `node scripts/vendor.js ...args`; resolves with the exit code and output. */
function vendor(...args) {
  return new Promise((resolve) => {
    execFile(process.execPath, ['scripts/vendor.js', ...args], { cwd: ROOT, env: cleanEnv(), timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? err.code : 0, stdout, stderr }),
    );
  });
}

test('npm run vendor writes a folder that runs with nothing installed: --version, then start and probe', { timeout: 120_000 }, async (t) => {
  const dir = scratch('vendor');
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const target = path.join(dir, 'bridge');
  const written = await vendor(target);
  assert.equal(written.code, 0, written.stderr);
  assert.match(written.stdout, /^vendored cc-mcp-bridge /);
  assert.deepEqual(readdirSync(target).sort(), ['.cc-mcp-bridge-vendor', 'README.md', 'dist', 'node_modules', 'package.json']);
  assert.deepEqual(readdirSync(path.join(target, 'node_modules')), ['ws']);
  const vendoredPkg = JSON.parse(readFileSync(path.join(target, 'package.json'), 'utf8'));
  assert.equal(vendoredPkg.devDependencies, undefined);
  assert.equal(vendoredPkg.type, 'module');

  const entry = path.join(target, 'dist', 'index.js');
  // run from the temp folder, so nothing of the project (its node_modules) is on the resolution path
  const version = await run(process.execPath, [entry, '--version'], { cwd: dir, env: cleanEnv(), timeout: 30_000 });
  assert.equal(version.stdout, `cc-mcp-bridge ${PKG.version}\n`);

  const child = spawn(process.execPath, [entry], {
    cwd: dir,
    env: cleanEnv({ MCP_PORT: '0', CC_LINK_PORT: '0', CC_LINK_HOST: '127.0.0.1' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (c) => (out += c));
  child.stderr.resume();
  const exited = once(child, 'exit');
  t.after(() => child.exitCode === null && child.kill('SIGKILL'));
  await until(() => out.includes('Computer link:') || child.exitCode !== null);
  const mcpUrl = /^MCP endpoint: (\S+)$/m.exec(out)?.[1];
  const linkUrl = /^Computer link: (ws:\/\/\S+) /m.exec(out)?.[1];
  assert.ok(mcpUrl && linkUrl, out);
  const computer = new FakeComputer(linkUrl, { computerId: 7, computerLabel: 'vendored' });
  assert.equal((await computer.link()).type, 'hello-ok');
  const res = await fetch(mcpUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'probe-computers', arguments: {} } }),
  });
  assert.equal((await res.json()).result.content[0].text, pongText(7, 'vendored'));
  const cli = await run(process.execPath, [path.join(target, 'dist', 'cli', 'index.js'), '--url', mcpUrl, 'probe'], { cwd: dir, env: cleanEnv(), timeout: 30_000 });
  assert.equal(cli.stdout, `${pongText(7, 'vendored')}\n`);
  const lua = await fetch(`${linkUrl.replace(/^ws/, 'http')}/mcp-computer.lua`);
  assert.equal(lua.status, 200);
  assert.equal(await lua.text(), readFileSync(path.join(ROOT, 'dist', 'mcp-computer.lua'), 'utf8'));
  await computer.close();
  child.kill('SIGTERM');
  const [code] = await exited;
  assert.equal(code, 0);

  // running it again refreshes the folder it wrote; it never clears anything else
  assert.equal((await vendor(target)).code, 0);
  const other = path.join(dir, 'other');
  mkdirSync(other);
  writeFileSync(path.join(other, 'keep.txt'), 'mine');
  const refused = await vendor(other);
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /is not empty and was not written by npm run vendor/);
  assert.equal(readFileSync(path.join(other, 'keep.txt'), 'utf8'), 'mine');
  const usage = await vendor();
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /usage: npm run vendor -- <dir>/);
});
