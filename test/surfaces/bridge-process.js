// Real bridge processes (node dist/index.js) for the MCP_SESSION_KEY_FILE tests: a temp dir whose
// bridges are killed before it is removed, start and stop, a 2025 initialize, and a GET /mcp stream.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rpc, until } from '../helpers.js';
import { VARIABLES } from '../../dist/config.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const VERSION = '2025-06-18';
export const LIST_CHANGED = { jsonrpc: '2.0', method: 'notifications/tools/list_changed' };
export const luaTool = (name) => ({ name, target: { computerId: 1 }, lua: 'return 1' });

/** A temp dir; every bridge started in it is killed before the dir is removed (first-registered runs first). */
export function tempDir(t) {
  const dir = mkdtempSync(join(tmpdir(), 'session-key-'));
  const children = [];
  t.after(async () => {
    for (const child of children) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await child.exited;
      }
    }
    rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
  });
  return { dir, children };
}

/** Spawns `node dist/index.js`; our variables come only from `env`. */
export function spawnBridge(env, children = null) {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !VARIABLES.some((v) => v.name === k)));
  const child = spawn(process.execPath, ['dist/index.js'], {
    cwd: ROOT,
    env: { ...base, MCP_PORT: '0', CC_LINK_PORT: '0', CC_LINK_HOST: '127.0.0.1', LOG_LEVEL: 'debug', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children?.push(child);
  const out = { stdout: '', stderr: '' };
  child.stdout.setEncoding('utf8').on('data', (c) => (out.stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c) => (out.stderr += c));
  const exited = once(child, 'exit').then(([code, signal]) => ({ code, signal, ...out }));
  return Object.assign(child, { out, exited });
}

export async function startProcess(space, env) {
  const child = spawnBridge(env, space.children);
  const early = child.exited.then((r) => {
    throw new Error(`bridge exited early: ${JSON.stringify(r)}`);
  });
  early.catch(() => {});
  await Promise.race([until(() => child.out.stdout.includes('Computer link:')), early]);
  const mcpUrl = /^MCP endpoint: (http:\/\/\S+)$/m.exec(child.out.stdout)[1];
  return Object.assign(child, { mcpUrl });
}

export async function stop(child) {
  child.kill('SIGTERM');
  const r = await child.exited;
  assert.equal(r.code, 0, r.stderr);
  return r;
}

/** initialize + notifications/initialized at 2025-06-18; the session id. */
export async function initialize(url) {
  const init = await rpc(url, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 't', version: '0' } } });
  assert.equal(init.status, 200, init.text);
  const id = init.headers.get('mcp-session-id');
  assert.match(id, /^[0-9a-f]{32}\.[0-9a-f]{32}$/);
  assert.equal((await rpc(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-protocol-version': VERSION, 'mcp-session-id': id })).status, 202);
  return id;
}

/** GET /mcp with the session id; resolves at the head with the status and the events that arrive. */
export function openStream(url, sessionId) {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { accept: 'text/event-stream', 'mcp-protocol-version': VERSION, 'mcp-session-id': sessionId } });
    req.on('error', reject);
    req.on('response', (res) => {
      const stream = { status: res.statusCode, events: [], body: '', close: () => req.destroy() };
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        stream.body += chunk;
        for (const [, data] of stream.body.matchAll(/^data: (.*)$/gm)) if (!stream.events.some((e) => e.raw === data)) stream.events.push({ raw: data, json: JSON.parse(data) });
      });
      res.on('error', () => {});
      if (res.statusCode !== 200) res.on('end', () => resolve(stream));
      else resolve(stream);
    });
    req.end();
  });
}
