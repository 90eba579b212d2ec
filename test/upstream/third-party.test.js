// An upstream nobody here wrote: the MCP reference server "everything" (@modelcontextprotocol/
// server-everything, built on the official SDK), run with npx from the local npm cache only.
// It is not a dependency and this test never reaches the network: when the package is not in the
// cache, both tests skip and say why; under CI=true they fail instead (.ci/run puts it in the cache
// first, so a skip there would hide a broken install step). Put it there once with
//   npx -y @modelcontextprotocol/server-everything < /dev/null
// Over stdio and over Streamable HTTP (its SSE answers, session id, GET stream and DELETE).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { writeConfig } from '../config/write.js';
import { callTool, rpc, session, until, withBridge } from '../helpers.js';

const PACKAGE = '@modelcontextprotocol/server-everything';
const NPX = process.platform === 'win32' ? 'npx.cmd' : 'npx';
const OFFLINE = { npm_config_offline: 'true', npm_config_update_notifier: 'false' };
const PROBE_MS = 60_000;

/** Starts the server from the cache (detached, so its whole group can be ended). */
function startEverything(args = [], env = {}) {
  return spawn(NPX, ['-y', PACKAGE, ...args], { env: { ...process.env, ...OFFLINE, ...env }, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
}

function stop(child) {
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // gone already
  }
}

const lastError = (stderr) => stderr.split('\n').filter((l) => /error/i.test(l) && !/complete log/.test(l)).at(-1)?.trim() ?? 'no error text';

/**
 * Whether the package runs from the cache: a hand-written initialize over stdio (not our client)
 * must be answered. Resolves to null when it is, or to the reason it is not.
 */
let probed = null;
function unavailable() {
  probed ??= new Promise((resolve) => {
    let child;
    try {
      child = startEverything();
    } catch (err) {
      resolve(`cannot run npx: ${err.message}`);
      return;
    }
    let out = '';
    let err = '';
    const done = (reason) => {
      clearTimeout(timer);
      stop(child);
      resolve(reason);
    };
    const timer = setTimeout(() => done(`${PACKAGE} did not answer initialize within ${PROBE_MS / 1000} s (stderr: ${err.trim().slice(-200)})`), PROBE_MS);
    child.on('error', (e) => done(`cannot run npx: ${e.message}`));
    child.on('exit', (code) => done(`${PACKAGE} is not in the local npm cache (npx offline exited with ${code}: ${lastError(err)})`));
    child.stderr.setEncoding('utf8').on('data', (c) => (err += c));
    child.stdout.setEncoding('utf8').on('data', (c) => {
      out += c;
      if (out.split('\n').some((line) => /"id":1\b/.test(line) && /"protocolVersion"/.test(line))) done(null);
    });
    child.stdin.on('error', () => {});
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'probe', version: '0' } } })}\n`);
  });
  return probed;
}

const health = async (bridge) => (await (await fetch(new URL('/health', bridge.mcpUrl))).json());
const up = (bridge) => until(async () => (await health(bridge)).servers.find((s) => s.state === 'up'), 20, 90_000);

/** What both transports must show: listing, text and args whole, structuredContent + outputSchema, images, links, cancel. */
async function exercise(bridge) {
  const status = await up(bridge);
  const tools = (await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).json.result.tools.filter((t) => t.name.startsWith('every__'));
  assert.equal(status.tools, tools.length);
  const byName = new Map(tools.map((t) => [t.name, t]));
  for (const name of ['every__echo', 'every__get-structured-content', 'every__get-tiny-image', 'every__get-resource-links', 'every__trigger-long-running-operation']) {
    assert.ok(byName.has(name), `${name} listed (got ${[...byName.keys()].join(', ')})`);
  }
  for (const t of tools) assert.match(t.name, /^[A-Za-z0-9_-]{1,64}$/);

  const text = 'a]] "q"\n\0é🐢';
  assert.deepEqual(await callTool(bridge, 'every__echo', { message: text }), { content: [{ type: 'text', text: `Echo: ${text}` }] });

  assert.ok(byName.get('every__get-structured-content').outputSchema, 'outputSchema passed through');
  const structured = await callTool(bridge, 'every__get-structured-content', { location: 'New York' });
  assert.equal(typeof structured.structuredContent, 'object');
  assert.deepEqual(JSON.parse(structured.content[0].text), structured.structuredContent);

  const image = await callTool(bridge, 'every__get-tiny-image');
  const png = image.content.find((c) => c.type === 'image');
  assert.equal(png.mimeType, 'image/png');
  assert.ok(Buffer.from(png.data, 'base64').subarray(1, 4).equals(Buffer.from('PNG')), 'image data arrives whole');

  // as a 2025-11-25 client; a 2025-03-26 one (no header) gets each link as a text block naming it
  const linkCall = { jsonrpc: '2.0', id: 'links', method: 'tools/call', params: { name: 'every__get-resource-links', arguments: { count: 2 } } };
  const links = (await rpc(bridge.mcpUrl, linkCall, { 'mcp-protocol-version': '2025-11-25' })).json.result;
  assert.equal(links.content.filter((c) => c.type === 'resource_link').length, 2);
  const old = (await rpc(bridge.mcpUrl, linkCall)).json.result;
  assert.deepEqual(old.content.map((c) => c.type), links.content.map((c) => (c.type === 'resource_link' ? 'text' : c.type)));
  assert.match(old.content.find((c) => c.text?.startsWith('Resource link: ')).text, /^Resource link: .+ at \S+:\/\//);

  // a long operation cancelled at the bridge ends there and upstream (the notice comes on another
  // connection, so it keeps the session: notifications/cancelled reaches only the same client's calls)
  const s = await session(bridge.mcpUrl);
  const pending = rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 'long', method: 'tools/call', params: { name: 'every__trigger-long-running-operation', arguments: { duration: 60, steps: 60 } } }, s);
  await until(() => bridge.dispatcher.activeCalls === 1);
  await rpc(bridge.mcpUrl, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'long' } }, s);
  const cancelled = (await pending).json.result;
  assert.equal(cancelled.isError, true);
  assert.match(cancelled.content[0].text, /was cancelled; upstream server "every" was told to stop/);
}

test('server-everything over stdio (npx from the cache), spawned by the bridge', { timeout: 180_000 }, async (t) => {
  const reason = await unavailable();
  if (reason) return missing(t, reason);
  const config = writeConfig({ servers: [{ id: 'every', command: NPX, args: ['-y', PACKAGE], env: OFFLINE }] });
  await withBridge({ CC_CONFIG: config }, exercise);
});

/** Skips, saying why; under CI=true .ci/run was to cache the package, so its absence fails. */
function missing(t, reason) {
  if (process.env.CI === 'true') throw new Error(`${reason}; .ci/run caches it with: npx -y ${PACKAGE} < /dev/null`);
  return t.skip(reason);
}

async function freePort() {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address();
  server.close();
  await once(server, 'close');
  return port;
}

test('server-everything over Streamable HTTP: SSE answers, its session kept and DELETEd at close', { timeout: 180_000 }, async (t) => {
  const reason = await unavailable();
  if (reason) return missing(t, reason);
  const port = await freePort();
  const server = startEverything(['streamableHttp'], { PORT: String(port) });
  t.after(() => stop(server));
  let log = '';
  server.stdout.setEncoding('utf8').on('data', (c) => (log += c));
  server.stderr.setEncoding('utf8').on('data', (c) => (log += c));
  await until(() => new RegExp(`listening on port ${port}`).test(log), 20, 60_000);

  const config = writeConfig({ servers: [{ id: 'every', url: `http://127.0.0.1:${port}/mcp` }] });
  const closed = await withBridge({ CC_CONFIG: config }, async (bridge) => {
    await exercise(bridge);
    return bridge;
  });
  assert.ok(closed.logs.some((l) => /upstream every is up: \d+ tool\(s\), MCP 20\d\d-\d\d-\d\d/.test(l)), closed.logs.filter((l) => l.includes("every")).join("\n"));
  // the session it issued went back to it with DELETE when the bridge closed
  const session = /Session initialized with ID: (\S+)/.exec(log)?.[1];
  assert.ok(session, log);
  await until(() => log.includes(`termination request for session ${session}`), 20, 10_000);
});
