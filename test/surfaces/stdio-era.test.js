// Protocol 2026-07-28 on `node dist/index.js --stdio` (spawned for real): every modern error on the
// pipe, the fall-back paths a dual-era client takes (probe server/discover first, as stdio clients
// do), a legacy client probing, and no unsolicited list_changed for a client speaking only 2026-07-28.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { until } from '../helpers.js';
import { VARIABLES } from '../../dist/config.js';
import { writeConfig } from '../config/write.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MODERN = '2026-07-28';
const SUPPORTED = ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'];
const meta = (version = MODERN) => ({ 'io.modelcontextprotocol/protocolVersion': version, 'io.modelcontextprotocol/clientCapabilities': {} });

/** The bridge with --stdio; `request` writes one line and resolves with the answer of that id. */
async function withStdio(env, fn) {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !VARIABLES.some((v) => v.name === k)));
  const child = spawn(process.execPath, ['dist/index.js', '--stdio'], {
    cwd: ROOT,
    env: { ...base, CC_LINK_PORT: '0', CC_LINK_HOST: '127.0.0.1', LOG_LEVEL: 'debug', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const messages = [];
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c) => {
    stdout += c;
    const lines = stdout.split('\n');
    stdout = lines.pop();
    for (const line of lines) messages.push(JSON.parse(line)); // every line must be one JSON message
  });
  child.stderr.setEncoding('utf8').on('data', (c) => (stderr += c));
  child.stdin.on('error', () => {});
  const exited = once(child, 'exit');
  let nextId = 1;
  const io = {
    messages,
    stderr: () => stderr,
    send: (message) => child.stdin.write(`${JSON.stringify(message)}\n`),
    async request(method, params) {
      const id = `r${nextId++}`;
      io.send(params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params });
      return until(() => messages.find((m) => m.id === id));
    },
    kill: (signal) => child.kill(signal),
  };
  try {
    return await fn(io);
  } finally {
    child.stdin.end();
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(timer);
  }
}

test('stdio 2026-07-28 errors: missing _meta fields -32602, unknown methods (initialize, ping with _meta) -32601, unsupported version -32022 with its id', () =>
  withStdio({}, async (io) => {
    const bare = await io.request('server/discover', { _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN } });
    assert.equal(bare.error.code, -32602);
    const noCaps = await io.request('tools/list', { _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN } });
    assert.equal(noCaps.error.code, -32602);
    assert.match(noCaps.error.message, /clientCapabilities/);
    for (const method of ['initialize', 'ping', 'resources/list']) {
      const answer = await io.request(method, { _meta: meta() });
      assert.equal(answer.error.code, -32601, method);
    }
    const newer = await io.request('tools/list', { _meta: meta('2027-01-01') });
    assert.equal(newer.id, 'r6');
    assert.equal(newer.error.code, -32022);
    assert.deepEqual(newer.error.data, { supported: SUPPORTED, requested: '2027-01-01' });
    const call = await io.request('tools/call', { _meta: meta(), name: 'probe-computers', arguments: {} });
    assert.equal(call.result.resultType, 'complete');
    assert.equal(call.result._meta['io.modelcontextprotocol/serverInfo'].name, 'cc-mcp-bridge');
    const list = await io.request('tools/list', { _meta: meta() });
    const names = list.result.tools.map((t) => t.name);
    assert.deepEqual(names, [...names].sort());
    assert.equal(typeof list.result.ttlMs, 'number');
  }));

/**
 * A dual-era stdio client as the revision describes it: probe server/discover with its preferred
 * modern version; a DiscoverResult keeps it modern, -32022 means pick a mutual version, any other
 * error means a legacy server: initialize. Returns the revision it ends up on and its steps.
 */
async function dualEra(io, offered) {
  const isModern = (v) => v >= MODERN;
  const steps = [];
  let version = offered[0];
  while (version && isModern(version)) {
    const probe = await io.request('server/discover', { _meta: meta(version) });
    steps.push(`discover ${version}: ${probe.error ? probe.error.code : 'result'}`);
    if (probe.result) return { version: offered.find((v) => probe.result.supportedVersions.includes(v)), steps };
    if (probe.error.code !== -32022) break;
    version = offered.find((v) => probe.error.data.supported.includes(v) && v !== version);
  }
  const init = await io.request('initialize', { protocolVersion: offered.find((v) => !isModern(v)), capabilities: {}, clientInfo: { name: 'dual', version: '1' } });
  steps.push(`initialize: ${init.result.protocolVersion}`);
  io.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  const list = await io.request('tools/list');
  assert.ok(list.result.tools.length > 0);
  return { version: init.result.protocolVersion, steps };
}

test('stdio fall-back paths: 2026-07-28 offered -> modern at once; a newer one first -> -32022 then 2026-07-28; no served modern one -> initialize', async () => {
  await withStdio({}, async (io) => {
    assert.deepEqual(await dualEra(io, [MODERN, '2025-11-25']), { version: MODERN, steps: ['discover 2026-07-28: result'] });
  });
  await withStdio({}, async (io) => {
    assert.deepEqual(await dualEra(io, ['2027-01-01', MODERN, '2025-06-18']), { version: MODERN, steps: ['discover 2027-01-01: -32022', 'discover 2026-07-28: result'] });
  });
  await withStdio({}, async (io) => {
    assert.deepEqual(await dualEra(io, ['2027-01-01', '2025-06-18']), { version: '2025-06-18', steps: ['discover 2027-01-01: -32022', 'initialize: 2025-06-18'] });
  });
});

test('stdio: a legacy client probing server/discover without _meta gets an error that is not a modern one and goes on with initialize', () =>
  withStdio({}, async (io) => {
    const probe = await io.request('server/discover', {});
    assert.equal(probe.error.code, -32601, JSON.stringify(probe));
    assert.ok(![-32020, -32021, -32022].includes(probe.error.code), JSON.stringify(probe.error));
    const init = await io.request('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'legacy', version: '1' } });
    assert.equal(init.result.protocolVersion, '2025-11-25');
    assert.equal(init.result.resultType, undefined);
    const list = await io.request('tools/list');
    assert.equal(list.result.resultType, undefined);
    assert.equal(list.result.ttlMs, undefined);
  }));

test('stdio: a client speaking only 2026-07-28 gets no unsolicited notifications/tools/list_changed (that revision sends them only on subscriptions/listen)', () => {
  const tool = (name) => ({ name, target: { computerId: 1 }, lua: 'return 1' });
  const file = writeConfig({ tools: [tool('one')] });
  return withStdio({ CC_CONFIG: file }, async (io) => {
    assert.ok((await io.request('server/discover', { _meta: meta() })).result);
    assert.ok((await io.request('tools/list', { _meta: meta() })).result);
    writeConfig({ tools: [tool('one'), tool('two')] }, file);
    io.kill('SIGHUP');
    await until(() => /config file reloaded/.test(io.stderr()));
    const list = await io.request('tools/list', { _meta: meta() });
    assert.ok(list.result.tools.some((t) => t.name === 'two'));
    assert.equal(io.messages.filter((m) => m.method === 'notifications/tools/list_changed').length, 0);
  });
});
