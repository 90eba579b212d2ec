// What a bare start loads (issue 16: start to both ports listening). Features that are not configured
// load their modules when configured or first used, and ws is loaded through require, not through
// its ESM entry (whose eight CommonJS files the ESM loader lexes one by one). A static import that
// brings one of these back into every start fails here, naming the module that imports it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { until } from './helpers.js';
import { VARIABLES } from '../dist/config.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST = new URL('../dist/', import.meta.url).href;

/** Starts `node dist/index.js` with the default configuration; resolves with what it loaded. */
async function bareStart() {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !VARIABLES.some((v) => v.name === k)));
  const child = spawn(process.execPath, ['--experimental-loader=./test/fixtures/record-loads.mjs', 'dist/index.js'], {
    cwd: ROOT,
    env: { ...env, MCP_PORT: '0', CC_LINK_PORT: '0', LOG_LEVEL: 'error' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c) => (stderr += c));
  const exited = once(child, 'exit');
  try {
    await Promise.race([until(() => stdout.includes('Computer link:')), exited.then(() => assert.fail(`bridge exited: ${stderr}`))]);
  } finally {
    child.kill();
    await exited;
  }
  const loads = new Map();
  for (const [, url, from] of stderr.matchAll(/^loaded (\S+) from (\S+)$/gm)) if (!loads.has(url)) loads.set(url, from);
  return loads;
}

test('a bare start loads neither the unconfigured features nor ws through its ESM entry', async () => {
  const loads = await bareStart();
  const ours = [...loads.keys()].filter((u) => u.startsWith(DIST)).map((u) => u.slice(DIST.length));
  // the hook saw the start: the listeners' modules are there
  for (const needed of ['index.js', 'bridge.js', 'link/server.js', 'link/ws.js', 'surfaces/http.js', 'tools/builtins.js']) assert.ok(ours.includes(needed), `${needed} not loaded: ${ours.join(' ')}`);
  const lazy = [/^config\/(file(-[a-z]+)?|hub|schema-check|checks|diff)\.js$/, /^upstream\//, /^cli\//, /^surfaces\/(stdio(-[a-z]+)?|openapi|get-stream|listen-stream)\.js$/, /^mcp\/(modern-dispatch|param-headers)\.js$/, /^link\/pins-(file|text|writer)\.js$/, /^jsonrpc\/(ndjson|client)\.js$/];
  const eager = ours.filter((m) => lazy.some((re) => re.test(m)));
  assert.deepEqual(eager.map((m) => `${m} (imported by ${loads.get(DIST + m).replace(DIST, '')})`), []);
  const wsEsm = [...loads.keys()].filter((u) => /\/node_modules\/ws\//.test(u));
  assert.deepEqual(wsEsm, [], 'ws is loaded through require (src/link/ws.ts)');
});
