// Reload: POST /reload (behind the same guards as /mcp) and SIGHUP re-read CC_CONFIG. A bad file
// changes nothing; a good one applies as a diff: unchanged servers keep running, changed ones
// restart, removed ones stop; calls in flight finish on what they started with.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { writeConfig } from './write.js';
import { fixtureServer } from '../upstream/fixture.js';
import { callTool, rpc, session, until, withBridge } from '../helpers.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TOKEN = 'reload-test-token-0123456789';

async function reload(bridge, headers = {}) {
  const res = await fetch(new URL('/reload', bridge.mcpUrl), { method: 'POST', headers });
  return { status: res.status, json: await res.json() };
}

const health = async (bridge) => (await (await fetch(new URL('/health', bridge.mcpUrl), { headers: { authorization: `Bearer ${TOKEN}` } })).json());
const names = async (bridge) => (await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { authorization: `Bearer ${TOKEN}` })).json.result.tools.map((t) => t.name);
const pidOf = (bridge, id) => {
  const lines = bridge.logs.map((l) => new RegExp(`upstream ${id} stderr: fixture started pid=(\\d+)`).exec(l)).filter(Boolean);
  return lines.length ? Number(lines.at(-1)[1]) : null;
};
const auth = { authorization: `Bearer ${TOKEN}` };

const tool = (name, lua = 'return 1') => ({ name, target: { computerId: 1 }, lua });

test('POST /reload: a bad file changes nothing and says why; a good one applies as a diff', async () => {
  const file = writeConfig({ tools: [tool('one'), tool('two')], servers: [fixtureServer('keep'), fixtureServer('change'), fixtureServer('drop')] });
  await withBridge({ CC_CONFIG: file, MCP_AUTH_TOKEN: TOKEN }, async (bridge) => {
    for (const id of ['keep', 'change', 'drop']) await until(async () => (await health(bridge)).servers.find((s) => s.id === id)?.state === 'up');
    const before = { keep: pidOf(bridge, 'keep'), change: pidOf(bridge, 'change'), drop: pidOf(bridge, 'drop') };

    // the same guards as /mcp: no token, no reload
    const refused = await reload(bridge);
    assert.equal(refused.status, 401);

    writeConfig({ tools: [tool('one')], servers: [{ id: 'keep' }] }, file);
    const bad = await reload(bridge, auth);
    assert.equal(bad.status, 422);
    assert.equal(bad.json.ok, false);
    assert.deepEqual(bad.json.problems, [{ path: '$.servers[0]', message: 'needs exactly one of "command" (a stdio server) or "url" (a Streamable HTTP server)' }]);
    assert.equal(bad.json.error, `${file}: $.servers[0]: needs exactly one of "command" (a stdio server) or "url" (a Streamable HTTP server)`);
    assert.ok(bridge.logs.some((l) => /error config reload refused; nothing changed:/.test(l)));
    const still = await names(bridge);
    assert.ok(['one', 'two', 'keep__echo', 'change__echo', 'drop__echo'].every((n) => still.includes(n)));

    writeConfig({ tools: [tool('one'), tool('three')], servers: [fixtureServer('keep'), fixtureServer('change', '--protocol', '2025-06-18'), fixtureServer('new')] }, file);
    const good = await reload(bridge, auth);
    assert.equal(good.status, 200);
    assert.deepEqual(good.json, {
      ok: true,
      changed: true,
      summary: 'tools added: three; tools removed: two; servers added: new; servers removed: drop; servers changed: change',
      tools: { added: ['three'], removed: ['two'], changed: [] },
      servers: { added: ['new'], removed: ['drop'], changed: ['change'] },
      endpoints: { added: [], removed: [], changed: [] },
    });
    await until(async () => (await health(bridge)).servers.every((s) => s.state === 'up'));
    const after = await names(bridge);
    assert.ok(after.includes('three') && !after.includes('two'));
    assert.ok(after.includes('new__echo') && after.includes('change__echo') && !after.some((n) => n.startsWith('drop__')));
    assert.deepEqual((await health(bridge)).servers.map((s) => s.id), ['keep', 'change', 'new']);
    assert.equal(pidOf(bridge, 'keep'), before.keep, 'the unchanged server kept running');
    assert.notEqual(pidOf(bridge, 'change'), before.change, 'the changed server restarted');
    const gone = (pid) => {
      try {
        process.kill(pid, 0);
        return false;
      } catch {
        return true;
      }
    };
    await until(() => gone(before.drop) && gone(before.change));

    const again = await reload(bridge, auth);
    assert.equal(again.json.changed, false);
    assert.equal(again.json.summary, 'nothing changed');
  });
});

test('a call in flight finishes on the server it started on when a reload replaces it', async () => {
  const file = writeConfig({ servers: [fixtureServer('fx')] });
  await withBridge({ CC_CONFIG: file }, async (bridge) => {
    await until(() => bridge.hub.serverStatus()[0]?.state === 'up');
    // a slow upstream call is in flight while the file changes that server
    const s = await session(bridge.mcpUrl);
    const pending = rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 'in-flight', method: 'tools/call', params: { name: 'fx__slow' } }, s);
    await until(() => bridge.dispatcher.activeCalls === 1);
    writeConfig({ servers: [{ ...fixtureServer('fx'), env: { CHANGED: '1' } }] }, file);
    assert.deepEqual(bridge.hub.reload().servers, { added: [], removed: [], changed: ['fx'] });
    await until(() => bridge.hub.serverStatus()[0]?.state === 'up');
    // the new server answers new calls while the old one still holds the slow call
    assert.equal((await callTool(bridge, 'fx__echo', { a: 2 })).structuredContent.args.a, 2);
    assert.equal(bridge.dispatcher.activeCalls, 1);
    await rpc(bridge.mcpUrl, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'in-flight' } }, s);
    const { json } = await pending;
    assert.match(json.result.content[0].text, /fx__slow was cancelled; upstream server "fx" was told to stop/);
  });
});

// Bug: a Lua tool's inputSchema with keywords the bridge does not enforce was accepted; a reload
// with one is refused like any invalid file, every problem listed, the running tools unchanged.
test('POST /reload: a Lua tool inputSchema with unenforced keywords is refused, every problem listed', async () => {
  const schema = (inputSchema) => ({ tools: [{ ...tool('pick'), inputSchema: { type: 'object', ...inputSchema } }] });
  const file = writeConfig(schema({ properties: { n: { type: 'integer', maximum: 3 } } }));
  await withBridge({ CC_CONFIG: file, MCP_AUTH_TOKEN: TOKEN }, async (bridge) => {
    writeConfig(schema({ properties: { n: { oneOf: [{ type: 'integer' }] }, s: { type: 'string', format: 'email', pattern: '[' } } }), file);
    const bad = await reload(bridge, auth);
    assert.equal(bad.status, 422);
    assert.deepEqual(bad.json.problems.map((p) => p.path), [
      '$.tools[0].inputSchema.properties.n.oneOf',
      '$.tools[0].inputSchema.properties.s.format',
      '$.tools[0].inputSchema.properties.s.pattern',
    ]);
    const listed = (await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, auth)).json.result.tools;
    assert.deepEqual(listed.find((t) => t.name === 'pick').inputSchema, { type: 'object', properties: { n: { type: 'integer', maximum: 3 } } });
  });
});

test('POST /reload without CC_CONFIG is 409; other methods 405', () =>
  withBridge({}, async (bridge) => {
    const res = await reload(bridge);
    assert.equal(res.status, 409);
    assert.match(res.json.error, /started without CC_CONFIG/);
    const get = await fetch(new URL('/reload', bridge.mcpUrl));
    assert.equal(get.status, 405);
    assert.equal(get.headers.get('allow'), 'POST');
    assert.equal((await (await fetch(new URL('/health', bridge.mcpUrl))).json()).servers, undefined);
  }));

test('SIGHUP re-reads the file in the running process', async () => {
  const file = writeConfig({ tools: [tool('first')] });
  const child = spawn(process.execPath, ['dist/index.js'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, CC_CONFIG: file, MCP_PORT: '0', CC_LINK_PORT: '0', CC_LINK_HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c) => (stderr += c));
  try {
    await until(() => /MCP endpoint: (\S+)/.test(stdout));
    const mcpUrl = /MCP endpoint: (\S+)/.exec(stdout)[1];
    const list = async () => (await rpc(mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).json.result.tools.map((t) => t.name);
    assert.ok((await list()).includes('first'));
    writeConfig({ tools: [tool('second')] }, file);
    child.kill('SIGHUP');
    await until(async () => (await list()).includes('second'));
    assert.ok(!(await list()).includes('first'));
    assert.match(stderr, /info config .*: tools added: second; tools removed: first/);
    assert.match(stderr, /info SIGHUP received; config file reloaded/);
    writeConfig('{ not json', file);
    child.kill('SIGHUP');
    await until(() => /config reload refused; nothing changed:\n.*not valid JSON/.test(stderr));
    assert.ok((await list()).includes('second'));
  } finally {
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
});

test('POST /reload with a form or text/plain body (what a cross-site page can send without a preflight) is 415 and reloads nothing (found by mutation testing: dropping the check passed every test)', async () => {
  const file = writeConfig({ tools: [{ name: 'before', target: { computerId: 1 }, lua: 'return 1' }] });
  await withBridge({ CC_CONFIG: file }, async (bridge) => {
    writeConfig({ tools: [{ name: 'after', target: { computerId: 1 }, lua: 'return 1' }] }, file);
    for (const type of ['application/x-www-form-urlencoded', 'text/plain', 'multipart/form-data; boundary=x']) {
      const res = await fetch(new URL('/reload', bridge.mcpUrl), { method: 'POST', headers: { 'content-type': type }, body: 'a=1' });
      assert.equal(res.status, 415, type);
      assert.equal(res.headers.get('accept'), 'application/json');
      assert.equal(res.headers.get('connection'), 'close');
      assert.equal((await res.json()).error, 'unsupported media type');
    }
    const names = (await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).json.result.tools.map((t) => t.name);
    assert.ok(names.includes('before') && !names.includes('after'), names.join());
    // JSON, or no type at all, reloads
    assert.equal((await fetch(new URL('/reload', bridge.mcpUrl), { method: 'POST' })).status, 200);
  });
});
