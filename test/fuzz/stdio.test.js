// Fuzz: `node dist/index.js --stdio` spawned for real, fed hostile lines on stdin: mutated JSON-RPC
// and MCP params at every field, mangled bytes, invalid UTF-8, batches, deep and oversize lines,
// CRLF and blank lines, all split at random chunk boundaries, with well-formed calls to a linked
// computer in between. Invariants: stdout carries only well-formed JSON-RPC lines, every request
// line whose id survived gets exactly one answer under that id, every good call gets its computer's
// answer, nothing fails inside the bridge (stderr), and EOF still exits 0.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { isUtf8 } from 'node:buffer';
import { once } from 'node:events';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { VARIABLES } from '../../dist/config.js';
import { FakeComputer, until } from '../helpers.js';
import { fuzzSeed, internalFailures, jsonRpcProblems, mangleText, mutateValueText, prng } from './lib.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const LINES = 800;
const MAX_LINE = 32 * 1024;
const GOOD = 31;

const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
const TEMPLATES = [
  { jsonrpc: '2.0', method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'fuzz', version: '0' } } },
  { jsonrpc: '2.0', method: 'ping' },
  { jsonrpc: '2.0', method: 'tools/list', params: {} },
  { jsonrpc: '2.0', method: 'tools/call', params: { name: 'list-computers', arguments: {} } },
  { jsonrpc: '2.0', method: 'tools/call', params: { name: 'exec-lua', arguments: { computerId: GOOD, code: 'return 1', timeoutMs: 2000 } } },
  { jsonrpc: '2.0', method: 'tools/call', params: { name: 'write-file', arguments: { computerId: GOOD, path: 'a', content: 'x' } } },
  { jsonrpc: '2.0', method: 'server/discover', params: { _meta: META } },
  { jsonrpc: '2.0', method: 'tools/call', params: { name: 'probe-computers', arguments: {}, _meta: META } },
];
const NOTIFICATIONS = [
  { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 's1', reason: 'fuzz' } },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', id: 'x', result: {} },
];

/** One hostile line (a Buffer ending in \n, or several) and the id its answer must carry, if any. */
function hostileLine(r, i) {
  const id = `s${i}`;
  const template = r.chance(0.85) ? { ...r.pick(TEMPLATES), id } : r.pick(NOTIFICATIONS);
  const kind = r.int(10);
  let body;
  if (kind < 2) body = Buffer.from(JSON.stringify(template));
  else if (kind < 7) body = Buffer.from(mutateValueText(r, template));
  else if (kind < 8) body = Buffer.from('[' + mutateValueText(r, template) + ',' + JSON.stringify({ ...r.pick(TEMPLATES), id: `${id}b` }) + ']');
  else if (kind < 9) body = mangleText(r, JSON.stringify(template));
  else body = r.chance(0.5) ? Buffer.alloc(MAX_LINE + r.int(5000), 0x61) : Buffer.from('['.repeat(50_000 + r.int(50_000)));
  // a raw newline inside a mangled body splits it into lines of its own: expect nothing of it
  const oneLine = !body.subarray(0, body.length).includes(0x0a) && !body.includes(0x0d);
  let expectId = null;
  // a line that is not UTF-8 is -32700 too (never decoded with U+FFFD and run)
  if (oneLine && body.length <= MAX_LINE && isUtf8(body)) {
    try {
      const value = JSON.parse(body.toString('utf8'));
      if (value && typeof value === 'object' && !Array.isArray(value) && value.id === id && typeof value.method === 'string') expectId = id;
    } catch {
      // not JSON: -32700, id null
    }
  }
  const end = r.pick(['\n', '\n', '\n', '\r\n', '\n\n', '\n \n']);
  return { bytes: Buffer.concat([body, Buffer.from(end)]), expectId, oneLine, cancels: template === NOTIFICATIONS[0] };
}

test('fuzz stdio: hostile lines on stdin never crash the bridge, stdout stays well-formed JSON-RPC, every surviving request id is answered once, good calls succeed', { timeout: 120_000 }, async (t) => {
  const seed = fuzzSeed(0x5eed_4);
  t.diagnostic(`FUZZ_SEED=${seed}`);
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !VARIABLES.some((v) => v.name === k)));
  const child = spawn(process.execPath, ['dist/index.js', '--stdio'], {
    cwd: ROOT,
    env: { ...base, CC_LINK_PORT: '0', CC_LINK_HOST: '127.0.0.1', LOG_LEVEL: 'info', MCP_MAX_BODY_BYTES: String(MAX_LINE), CC_EXEC_TIMEOUT_MS: '3000', CC_PROBE_TIMEOUT_MS: '500' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const exited = once(child, 'exit');
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c) => (stderr += c));
  try {
    await until(() => /^Computer link: ws:\/\/\S+/m.test(stderr));
    const linkUrl = /^Computer link: (ws:\/\/\S+) /m.exec(stderr)[1];
    const computer = new FakeComputer(linkUrl, {
      computerId: GOOD,
      onRequest: (frame) => (frame.method === 'exec-lua' ? { ok: true, result: { output: '', returns: [{ type: 'string', value: `ok:${frame.params.code}` }] } } : frame.method === 'ping' ? { ok: true, result: 'pong' } : { ok: false, error: 'no' }),
    });
    assert.equal((await computer.link()).type, 'hello-ok');

    const r = prng(seed);
    const expected = [];
    const goodIds = [];
    // a call its client cancelled gets no answer (950db5c): once a notice for s1 may have been sent,
    // s1 is answered at most once instead of exactly once
    let s1Cancelled = false;
    let pending = Buffer.alloc(0);
    for (let i = 0; i < LINES; i++) {
      const line = hostileLine(r, i);
      if (line.expectId) expected.push(line.expectId);
      if (line.cancels) s1Cancelled = true;
      pending = Buffer.concat([pending, line.bytes]);
      if (i % 20 === 0) {
        const id = `g${i}`;
        goodIds.push(id);
        pending = Buffer.concat([pending, Buffer.from(JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'exec-lua', arguments: { computerId: GOOD, code: `return ${i}` } } }) + '\n')]);
      }
      // written in pieces cut anywhere, a message across writes or many in one
      while (pending.length > 0 && r.chance(0.7)) {
        const n = 1 + r.int(Math.min(pending.length, 40_000));
        if (!child.stdin.write(pending.subarray(0, n))) await once(child.stdin, 'drain');
        pending = pending.subarray(n);
      }
    }
    child.stdin.write(pending);
    if (s1Cancelled && expected.includes('s1')) expected.splice(expected.indexOf('s1'), 1);
    const answered = (id) => stdout.includes(`"id":${JSON.stringify(id)}`);
    await until(() => goodIds.every(answered) && expected.every(answered), 5, 60_000);
    child.stdin.end();
    const [code] = await exited;
    assert.equal(code, 0, stderr.slice(-2000));

    const messages = stdout.split('\n').slice(0, -1).map((line) => JSON.parse(line));
    const problems = [];
    for (const m of messages) {
      if (Array.isArray(m)) for (const item of m) problems.push(...jsonRpcProblems(item));
      else if (m.method === 'notifications/tools/list_changed') continue;
      else problems.push(...jsonRpcProblems(m).map((p) => `${p}: ${JSON.stringify(m).slice(0, 200)}`));
    }
    assert.deepEqual(problems.slice(0, 10), []);
    const flat = messages.flatMap((m) => (Array.isArray(m) ? m : [m]));
    const count = new Map();
    for (const m of flat) if (typeof m.id === 'string') count.set(m.id, (count.get(m.id) ?? 0) + 1);
    assert.deepEqual(expected.filter((id) => count.get(id) !== 1), [], 'each surviving request id answered exactly once');
    assert.ok((count.get('s1') ?? 0) <= 1, 's1 answered at most once');
    for (const id of goodIds) {
      const m = flat.find((x) => x.id === id);
      assert.equal(m.result?.structuredContent?.returns?.[0]?.value, `ok:return ${id.slice(1)}`, JSON.stringify(m));
    }
    t.diagnostic(`lines: ${LINES}; answers: ${messages.length}; request ids that had to be answered: ${expected.length}`);
    assert.deepEqual(internalFailures(stderr.split('\n')), []);
    await computer.closed;
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
});
