// Two bridges joined over stdio, the way one reaches another with `ssh host cc-mcp-bridge --stdio`:
// the test talks to a near bridge (`--stdio`), whose CC_CONFIG lists a far bridge (`--stdio`, spawned
// by the near one) as an upstream, whose own CC_CONFIG lists the stdio fixture server. A tool list
// change at the bottom travels all the way up as notifications/tools/list_changed, calls travel down,
// and closing the near bridge's stdin ends the whole chain.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { VARIABLES } from '../../dist/config.js';
import { writeConfig } from '../config/write.js';
import { fixtureServer } from './fixture.js';
import { processAlive, until } from '../helpers.js';

const INDEX = fileURLToPath(new URL('../../dist/index.js', import.meta.url));
const LINK = { CC_LINK_PORT: '0', CC_LINK_HOST: '127.0.0.1', LOG_LEVEL: 'debug' };

function spawnNear(env) {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !VARIABLES.some((v) => v.name === k)));
  const child = spawn(process.execPath, [INDEX, '--stdio'], { env: { ...base, ...LINK, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  const messages = [];
  let buffer = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c) => {
    buffer += c;
    const lines = buffer.split('\n');
    buffer = lines.pop();
    for (const line of lines) messages.push(JSON.parse(line));
  });
  child.stderr.setEncoding('utf8').on('data', (c) => (stderr += c));
  child.stdin.on('error', () => {});
  let nextId = 1;
  return Object.assign(child, {
    messages,
    stderr: () => stderr,
    async request(method, params) {
      const id = nextId++;
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
      return until(() => messages.find((m) => m.id === id));
    },
  });
}

/** Direct children of a process (Linux). */
function childrenOf(pid) {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((t) => readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number));
  } catch {
    return [];
  }
}

test('near <- far <- fixture over stdio: names nest, calls go down, list_changed comes up, closing ends all three', { skip: process.platform !== 'linux' && 'reads /proc' }, async (t) => {
  const farConfig = writeConfig({ servers: [fixtureServer('fx')] });
  const nearConfig = writeConfig({ servers: [{ id: 'far', command: process.execPath, args: [INDEX, '--stdio'], env: { CC_CONFIG: farConfig, ...LINK } }] });
  const near = spawnNear({ CC_CONFIG: nearConfig });
  t.after(() => near.kill('SIGKILL'));

  const init = await near.request('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'chain-test', version: '0' } });
  assert.equal(init.result.capabilities.tools.listChanged, true);
  const list = async () => (await near.request('tools/list')).result.tools.map((x) => x.name);
  await until(async () => (await list()).includes('far__fx__echo'), 20);
  const names = await list();
  assert.ok(names.includes('far__exec-lua') && names.includes('far__fx__files-2e-read-2f-v2'), names.join());

  const echo = await near.request('tools/call', { name: 'far__fx__echo', arguments: { s: 'a]]\n\0é🐢' } });
  assert.deepEqual(echo.result.structuredContent, { args: { s: 'a]]\n\0é🐢' } });

  // the fixture adds a tool and says so; the far bridge re-lists and says so; the near one too
  const changesBefore = near.messages.filter((m) => m.method === 'notifications/tools/list_changed').length;
  assert.equal((await near.request('tools/call', { name: 'far__fx__change', arguments: {} })).result.content[0].text, 'changed');
  await until(() => near.messages.filter((m) => m.method === 'notifications/tools/list_changed').length > changesBefore);
  await until(async () => (await list()).includes('far__fx__added'), 20);

  // the whole chain is three processes; closing the near bridge's stdin ends them all
  const fixturePid = Number(/upstream fx stderr: fixture started pid=(\d+)/.exec(near.stderr())[1]);
  const [farPid] = childrenOf(near.pid);
  assert.ok(processAlive(fixturePid) && farPid && processAlive(farPid));
  near.stdin.end();
  const [code] = await once(near, 'exit');
  assert.equal(code, 0);
  await until(() => !processAlive(farPid) && !processAlive(fixturePid));
});
