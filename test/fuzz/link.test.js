// Fuzz: hostile frames from computers on the link port (real WebSocket clients). Attacker computers
// send hellos with each kind of key (absent, their own, too short/long, bad characters, not a string;
// each checked against its answer, CC_LINK_PIN on), mutated hellos, mutated answers (wrong ids, ids of the victim's requests, which they are
// handed here as if they had guessed them, other attackers' ids, wrong types, huge strings, deep
// nesting, nan/inf-like text as CC's textutils.serializeJSON writes), cancel and request frames,
// binary frames and invalid UTF-8, while MCP callers keep calling both the victim and the attackers.
// Invariants: every victim call gets the victim's own answer (no attacker can answer, see or cancel
// it), every attacker call gets a well-formed answer, nothing fails inside the bridge, and a bad
// frame gets an error/close, never a crash.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import WebSocket from 'ws';
import { linkComputer, rpc, withBridge } from '../helpers.js';
import { validate } from '../../dist/tools/schema.js';
import { deepArrayText, fuzzSeed, hostileValueText, internalFailures, jsonRpcProblems, mutateValueText, prng } from './lib.js';

const VICTIM = 500;
const ATTACKERS = 4;
const FRAMES_PER_ATTACKER = 500;
const VICTIM_CALLS = 120;

/** Values as textutils.serializeJSON writes them for NaN and the infinities (not JSON). */
const CC_NUMBERS = ['nan', '-nan', 'inf', '-inf', '1.#INF', '-1.#IND', 'NaN', 'Infinity', '-Infinity', '0/0'];

function attackerFrame(r, ids) {
  const id = () => {
    const source = r.int(10);
    if (source < 4 && ids.victim.length) return JSON.stringify(r.pick(ids.victim));
    if (source < 6 && ids.own.length) return JSON.stringify(r.pick(ids.own));
    if (source < 7 && ids.others.length) return JSON.stringify(r.pick(ids.others));
    return hostileValueText(r, { deep: r.chance(0.3) });
  };
  const result = () => {
    switch (r.int(8)) {
      case 0:
        return '{"output":"","returns":[{"type":"number","value":' + r.pick(CC_NUMBERS) + '}]}';
      case 1:
        return '{"output":' + JSON.stringify('o'.repeat(r.int(200_000))) + ',"returns":[]}';
      case 2:
        return '{"output":"","returns":[{"type":"table","value":' + deepArrayText(r.int(2) ? 40 : 5000) + '}]}';
      case 3:
        return '{"output":"","returns":' + hostileValueText(r) + '}';
      case 4:
        return '{"output":"forged","returns":[{"type":"string","value":"A:forged"}],"truncated":false}';
      case 5:
        return '{"entries":' + hostileValueText(r) + ',"data":' + hostileValueText(r) + '}';
      default:
        return hostileValueText(r);
    }
  };
  const kind = r.int(20);
  if (kind === 0) return { data: Buffer.from(Array.from({ length: r.int(200) }, () => r.int(256))), binary: true };
  if (kind === 1) return { data: Buffer.from([0x7b, 0x22, 0xc3, 0x28, 0xed, 0xa0, 0x80, 0x22, 0x7d]), binary: false, fatal: true };
  if (kind === 2) return { data: '{"type":"response","id":' + id() + ',"ok":true,"result":' + r.pick(CC_NUMBERS) + '}', binary: false };
  if (kind === 3) return { data: '{"type":"cancel","id":' + id() + '}', binary: false };
  if (kind === 4) return { data: '{"type":"request","id":' + id() + ',"method":"ping"}', binary: false };
  if (kind === 5) {
    const { computerLabel, peripherals, jobs, omitted } = fullHello(0);
    return { data: mutateValueText(r, { type: 'info', computerLabel, peripherals, jobs, omitted }), binary: false };
  }
  // never the victim's id: without CC_LINK_TOKEN any socket may link as any id and replace it, by
  // design (README, Security); the test below checks what that replacement may and may not reach
  if (kind === 6) return { data: '{"type":"hello","computerId":' + r.pick(['601', '1', '-1', '1e999', '"500"', '6.01e2']) + '}', binary: false };
  if (kind === 7) return { data: deepArrayText(r.int(100_000)), binary: false };
  const fields = [
    ['type', r.chance(0.9) ? '"response"' : hostileValueText(r)],
    ['id', id()],
    ['ok', r.chance(0.8) ? r.pick(['true', 'false']) : hostileValueText(r)],
  ];
  if (r.chance(0.7)) fields.push(['result', result()]);
  if (r.chance(0.5)) fields.push(['error', r.chance(0.7) ? JSON.stringify('boom ' + 'e'.repeat(r.int(2) ? 10 : 100_000)) : hostileValueText(r)]);
  if (r.chance(0.1)) fields.push(['__proto__', '{"ok":true}']);
  if (r.chance(0.1)) fields.push([r.pick(fields)[0], hostileValueText(r)]); // a key twice
  return { data: '{' + fields.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',') + '}', binary: false };
}

/** A hello as mcp-computer sends it, every identity field set; the fuzz breaks one field of it. */
const fullHello = (computerId) => ({
  type: 'hello',
  computerId,
  computerLabel: `attacker-${computerId}`,
  version: '0.1.0',
  kind: 'turtle',
  advanced: true,
  host: 'ComputerCraft 1.109.0 (Minecraft 1.20.1)',
  ccVersion: '1.109.0',
  maxFrame: 131072,
  peripherals: [{ name: 'left', types: ['monitor'] }, { name: 'back', types: ['modem', 'peripheral_hub'] }],
  jobs: [{ job: 'j1', kind: 'exec-lua', what: 'sleep(5)', state: 'running', outputBytes: 3 }],
  omitted: { peripherals: 1, jobs: 0 },
});

/** Each attacker's own key (mcp.key): 16-128 characters of A-Z a-z 0-9 _ -. */
const attackerKey = (computerId) => `attacker_${computerId}-key-0123456789`;

/**
 * The hello key variants (src/link/frames.ts parseKey) and what the bridge answers each, CC_LINK_PIN
 * on: a bad key is hello-error `invalid`; the attacker's own key links (and pins its id); no key links
 * until the id is pinned, then it is hello-error `key_mismatch`.
 */
const KEY_VARIANTS = [
  ['absent', () => undefined, (pinned) => (pinned ? 'key_mismatch' : 'ok')],
  ['good', (id) => attackerKey(id), () => 'ok'],
  ['too short', () => 'k'.repeat(15), () => 'invalid'],
  ['too long', () => 'k'.repeat(129), () => 'invalid'],
  ['bad characters', () => 'k'.repeat(20) + '!', () => 'invalid'],
  ['space inside', () => 'k'.repeat(10) + ' ' + 'k'.repeat(10), () => 'invalid'],
  ['non-string', (id, r) => r.pick([12345678901234567, true, { key: 'k'.repeat(20) }, ['k'.repeat(20)]]), () => 'invalid'],
];

/** A hello and, for an intact one, its key variant (a mutated one has no key and no expectation). */
function attackerHello(r, computerId) {
  const good = fullHello(computerId);
  if (r.chance(0.5)) {
    const [name, key, expect] = r.pick(KEY_VARIANTS);
    const value = key(computerId, r);
    return { text: JSON.stringify(value === undefined ? good : { ...good, key: value }), variant: name, expect };
  }
  // never the victim's id (see kind 6 above)
  return { text: mutateValueText(r, good).replace(new RegExp(`"computerId":${VICTIM}\\b`), '"computerId":1') };
}

test('fuzz link frames: attackers cannot answer, see or cancel the victim\'s requests; bad frames never crash the bridge', { timeout: 120_000 }, async (t) => {
  const seed = fuzzSeed(0x5eed_3);
  t.diagnostic(`FUZZ_SEED=${seed}`);
  await withBridge({ CC_EXEC_TIMEOUT_MS: '3000', CC_PROBE_TIMEOUT_MS: '500', CC_LINK_MAX_BYTES_PER_S: String(64 * 1024 * 1024), CC_HELLO_RATE: '2000', CC_MAX_FRAME_BYTES: String(512 * 1024), LOG_LEVEL: 'debug' }, async (bridge) => {
    const r = prng(seed);
    // the victim answers every exec-lua after a short wait with a value made from its code
    const victimIds = [];
    const victim = await linkComputer(bridge, {
      computerId: VICTIM,
      onRequest: (frame) => {
        if (frame.method === 'ping') return { ok: true, result: 'pong' };
        victimIds.push(frame.id);
        return new Promise((resolve) => setTimeout(() => resolve({ ok: true, result: { output: '', returns: [{ type: 'string', value: `A:${frame.params.code}` }], truncated: false } }), 1 + (victimIds.length % 15)));
      },
    });
    const attackerSeen = [];
    // hello key variants: ids pinned by an attacker's good key, outcomes by variant, mismatches
    const pinned = new Set();
    const keyOutcomes = {};
    const keyProblems = [];
    const attackerIds = new Map();
    const closes = {};
    const attacker = async (k) => {
      const computerId = 600 + k;
      const own = [];
      attackerIds.set(computerId, own);
      let sent = 0;
      while (sent < FRAMES_PER_ATTACKER) {
        const ws = new WebSocket(bridge.linkUrl);
        ws.on('error', () => {});
        ws.on('message', (data) => {
          const text = data.toString();
          attackerSeen.push(text);
          try {
            const f = JSON.parse(text);
            if (f.type === 'request' && typeof f.id === 'string') own.push(f.id);
          } catch {
            // the bridge sends only JSON
          }
        });
        const closed = once(ws, 'close').then(([code]) => {
          closes[code] = (closes[code] ?? 0) + 1;
        });
        const answer = once(ws, 'message').then(([data]) => JSON.parse(data.toString()), () => null);
        await once(ws, 'open');
        const hello = attackerHello(r, computerId);
        ws.send(hello.text);
        if (hello.expect) {
          // the hello's answer, before any other frame is sent on this socket
          const frame = await Promise.race([answer, closed.then(() => null)]);
          const expected = hello.expect(pinned.has(computerId));
          const got = frame?.type === 'hello-ok' ? 'ok' : frame?.type === 'hello-error' ? frame.code : JSON.stringify(frame);
          keyOutcomes[`${hello.variant} -> ${got}`] = (keyOutcomes[`${hello.variant} -> ${got}`] ?? 0) + 1;
          // busy: a link limit hit under the fuzz's load, whatever the key
          if (got !== expected && got !== 'busy') keyProblems.push(`${computerId} ${hello.variant} key (pinned: ${pinned.has(computerId)}): expected ${expected}, got ${got}`);
          if (hello.variant === 'good' && got === 'ok') pinned.add(computerId);
        }
        while (sent < FRAMES_PER_ATTACKER && ws.readyState === WebSocket.OPEN) {
          for (let i = 0; i < 10 && ws.readyState === WebSocket.OPEN; i++, sent++) {
            const others = [...attackerIds].filter(([id]) => id !== computerId).flatMap(([, list]) => list.slice(-5));
            const { data, binary } = attackerFrame(r, { victim: victimIds.slice(-20), own: own.slice(-10), others });
            ws.send(data, { binary });
          }
          // a barrier: the pong comes after the bridge handled every frame sent before the ping
          if (ws.readyState === WebSocket.OPEN) {
            ws.ping();
            await Promise.race([once(ws, 'pong'), closed]);
          }
        }
        if (ws.readyState === WebSocket.OPEN) ws.close();
        await closed;
      }
    };
    // MCP callers: the victim's calls must all come back with its own answers
    const victimProblems = [];
    const callVictim = async (n) => {
      const code = `return ${n}`;
      const res = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: n, method: 'tools/call', params: { name: 'exec-lua', arguments: { computerId: VICTIM, code } } });
      const value = res.json?.result?.structuredContent?.returns?.[0]?.value;
      if (res.status !== 200 || res.json?.id !== n || res.json.result.isError || value !== `A:${code}`) victimProblems.push(`${res.status} ${res.text.slice(0, 300)}`);
    };
    const listed = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 'l', method: 'tools/list' });
    const listSchema = listed.json.result.tools.find((tool) => tool.name === 'list-computers').outputSchema;
    let attacking = true;
    const attackerCallProblems = [];
    let attackerCalls = 0;
    const callAttackers = async () => {
      const tools = [['exec-lua', { code: 'return 1', timeoutMs: 300 }], ['list-files', { path: '/' }], ['read-file', { path: 'a' }], ['list-peripherals', {}], ['job-status', { job: 'j' }], ['read-screen', {}]];
      while (attacking) {
        const [name, args] = tools[attackerCalls++ % tools.length];
        const target = 600 + (attackerCalls % ATTACKERS);
        const res = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: `a${attackerCalls}`, method: 'tools/call', params: { name, arguments: { computerId: target, ...args, timeoutMs: 300 } } });
        const problems = res.json === null ? ['not JSON'] : jsonRpcProblems(res.json);
        if (res.status === 500 || problems.length) attackerCallProblems.push(`${name}: ${res.status} ${problems.join('; ')} ${res.text.slice(0, 200)}`);
        if (attackerCalls % 10 === 0) {
          const probe = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 'p', method: 'tools/call', params: { name: 'probe-computers', arguments: {} } });
          if (probe.status !== 200 || jsonRpcProblems(probe.json).length || !probe.text.includes(`${VICTIM}`)) attackerCallProblems.push(`probe: ${probe.text.slice(0, 300)}`);
          // what hostile hellos and info frames said about the attackers is listed within its outputSchema
          const list = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 'c', method: 'tools/call', params: { name: 'list-computers', arguments: {} } });
          const invalid = list.json?.result ? validate(list.json.result.structuredContent, listSchema, 'structuredContent') : 'no result';
          if (list.status !== 200 || invalid) attackerCallProblems.push(`list-computers: ${invalid} ${list.text.slice(0, 300)}`);
          const rest = await fetch(new URL('/computers', bridge.mcpUrl));
          if (rest.status !== 200 || !Array.isArray(await rest.json())) attackerCallProblems.push(`GET /computers: ${rest.status}`);
        }
      }
    };
    const victimCalls = (async () => {
      for (let n = 0; n < VICTIM_CALLS; n += 4) await Promise.all([0, 1, 2, 3].map((i) => callVictim(n + i)));
    })();
    const attackerCallers = Promise.all([callAttackers(), callAttackers()]);
    await Promise.all(Array.from({ length: ATTACKERS }, (_, k) => attacker(k)));
    await victimCalls;
    attacking = false;
    await attackerCallers;
    t.diagnostic(`victim requests: ${victimIds.length}; attacker calls: ${attackerCalls}; attacker closes by code: ${JSON.stringify(closes)}; frames rejected: ${JSON.stringify(Object.fromEntries(bridge.metrics.framesRejected.values))}`);

    t.diagnostic(`hello key variants -> answers: ${JSON.stringify(keyOutcomes)}`);
    assert.deepEqual(keyProblems, [], 'each hello key variant got its answer');
    for (const variant of ['absent', 'good', 'too short', 'too long', 'bad characters', 'non-string']) {
      assert.ok(Object.keys(keyOutcomes).some((k) => k.startsWith(`${variant} -> `)), `no hello with the ${variant} key was sent`);
    }
    assert.ok(keyOutcomes['absent -> key_mismatch'] > 0, 'no keyless hello for a pinned id');
    assert.deepEqual(victimProblems, [], 'every victim call got the victim\'s own answer');
    assert.equal(victimIds.length, VICTIM_CALLS);
    // no attacker saw a victim request (their codes are "return <n>" with the victim's value prefix)
    assert.deepEqual(attackerSeen.filter((text) => victimIds.some((id) => text.includes(id))), []);
    // nobody cancelled the victim's calls
    assert.deepEqual(victim.received.filter((f) => f.type === 'cancel'), []);
    assert.deepEqual(attackerCallProblems.slice(0, 10), []);
    assert.equal(bridge.metrics.framesRejected.get('internal'), 0);
    assert.deepEqual(internalFailures(bridge.logs), []);
    // the bridge took the hostile frames for what they are
    assert.ok(bridge.metrics.framesRejected.get('invalid') > 0);
    assert.ok(bridge.metrics.framesRejected.get('binary') > 0);
    assert.ok(bridge.metrics.framesRejected.get('unknown_id') > 0);
    const health = await fetch(new URL('/health', bridge.mcpUrl));
    assert.equal(health.status, 200);
    await victim.close();
  });
});

test('a link that replaces the victim\'s id is never handed, and cannot answer, the victim\'s requests in flight', () =>
  withBridge({ CC_EXEC_TIMEOUT_MS: '5000' }, async (bridge) => {
    const victim = await linkComputer(bridge, { computerId: VICTIM, onRequest: () => null });
    const call = rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'exec-lua', arguments: { computerId: VICTIM, code: 'return "secret"' } } });
    const request = await victim.next((f) => f.type === 'request' && f.method === 'exec-lua');
    // the impostor knows the id (as if guessed) and answers it at once after its hello
    const impostor = new WebSocket(bridge.linkUrl);
    const seen = [];
    impostor.on('message', (d) => seen.push(d.toString()));
    await once(impostor, 'open');
    impostor.send(JSON.stringify({ type: 'hello', computerId: VICTIM }));
    impostor.send(JSON.stringify({ type: 'response', id: request.id, ok: true, result: { output: '', returns: [{ type: 'string', value: 'forged' }] } }));
    const res = await call;
    assert.equal(res.json.result.isError, true);
    assert.match(res.json.result.content[0].text, /dropped before it answered \(replaced by a new link/);
    assert.ok(!res.text.includes('forged'));
    assert.ok(seen.every((text) => !text.includes('secret') && !text.includes(request.id)), seen.join('\n'));
    impostor.close();
    await victim.closed;
  }));

/** A plausible answer per method, as mcp-computer sends them; the fuzz breaks one field of it. */
const PLAUSIBLE = {
  ping: 'pong',
  'exec-lua': { output: 'x\n', returns: [{ type: 'number', value: 1 }, { type: 'table', value: { a: [1, 'b'] } }, { type: 'nil' }], truncated: false },
  'run-program': { output: 'x', returns: [{ type: 'boolean', value: true }] },
  'call-peripheral': { returns: [{ type: 'string', value: 's' }] },
  'list-files': { path: '/', entries: [{ name: 'a', isDir: false, isReadOnly: false, size: 3 }], total: 1, isReadOnly: false, freeSpace: 5 },
  'read-file': { size: 3, offset: 0, length: 3, checksum: 38600999, data: 'YWJj' },
  'write-file': { written: 3, size: 3, checksum: 38600999 },
  'delete-file': { path: 'a', wasDir: false },
  'move-file': { from: 'a', to: 'b' },
  'list-peripherals': { peripherals: [{ name: 'left', types: ['monitor'], methods: ['write'] }] },
  'read-screen': { width: 2, height: 1, cursorX: 1, cursorY: 1, cursorBlink: true, lines: ['ab'], foreground: ['00'], background: ['ff'] },
  'send-input': { queued: 1 },
  'check-lua': { ok: false, errors: [{ line: 1, message: 'x' }] },
  'job-status': { job: 'j', kind: 'exec-lua', what: '', state: 'done', outputBytes: 0, output: '', cursor: 0, returns: [] },
  'job-cancel': { job: 'j', state: 'cancelled' },
};
const CALLS = [
  ['probe-computers', {}],
  ['exec-lua', { code: 'return 1' }],
  ['exec-lua', { code: 'return 1', detach: true }],
  ['run-program', { command: 'ls' }],
  ['call-peripheral', { name: 'left', method: 'write', args: ['x'] }],
  ['list-files', { path: '/' }],
  ['read-file', { path: 'a' }],
  ['write-file', { path: 'a', content: 'abc' }],
  ['delete-file', { path: 'a' }],
  ['move-file', { from: 'a', to: 'b' }],
  ['list-peripherals', {}],
  ['read-screen', {}],
  ['send-input', { text: 'hi' }],
  ['check-lua', { code: 'x' }],
  ['job-status', { job: 'j' }],
  ['job-cancel', { job: 'j' }],
];

test('fuzz computer answers: every tool\'s answer broken at one field gets a well-formed result or error, never an internal failure', { timeout: 120_000 }, async (t) => {
  const seed = fuzzSeed(0x5eed_6);
  t.diagnostic(`FUZZ_SEED=${seed}`);
  const r = prng(seed);
  await withBridge({ CC_EXEC_TIMEOUT_MS: '2000', CC_MAX_FRAME_BYTES: String(512 * 1024), CC_LINK_MAX_BYTES_PER_S: String(64 * 1024 * 1024) }, async (bridge) => {
    const computer = await linkComputer(bridge, {
      computerId: 9,
      onRequest: (frame) => {
        const template = PLAUSIBLE[frame.method] ?? {};
        const kind = r.int(10);
        if (kind < 2) return { ok: true, result: template };
        // as text: a mutated value may nest deeper than JSON.stringify can walk
        const failed = kind === 2 ? `,"error":${JSON.stringify(r.pick(['boom', '', 'x'.repeat(100_000)]))}` : '';
        const text = `{"type":"response","id":${JSON.stringify(frame.id)},"ok":${failed ? 'false' : 'true'}${failed},"result":${mutateValueText(r, template)}}`;
        computer.ws.send(text);
        return null;
      },
    });
    const listed = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 'l', method: 'tools/list' });
    const outputSchemas = new Map(listed.json.result.tools.map((tool) => [tool.name, tool.outputSchema]));
    const problems = [];
    const tally = { ok: 0, isError: 0 };
    let next = 0;
    const worker = async () => {
      while (next < 600) {
        const n = next++;
        const [name, args] = CALLS[n % CALLS.length];
        const res = await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: n, method: 'tools/call', params: { name, arguments: name === 'probe-computers' ? {} : { computerId: 9, ...args } } });
        const wrong = res.json === null ? ['not JSON'] : jsonRpcProblems(res.json);
        const result = res.json?.result;
        if (res.status !== 200 || wrong.length || res.json.id !== n || !Array.isArray(result?.content) || result.content.some((b) => b.type !== 'text' || typeof b.text !== 'string')) {
          problems.push(`${name}: ${res.status} ${wrong.join('; ')} ${res.text.slice(0, 300)}`);
        } else {
          tally[result.isError ? 'isError' : 'ok']++;
          // nothing of the bridge's own leaks into the text, and structuredContent keeps the declared outputSchema (clients check it)
          const text = result.content.map((b) => b.text).join('\n');
          if (/\bundefined\b|\[object Object\]/.test(text)) problems.push(`${name}: text shows ${text.slice(0, 300)}`);
          const schema = outputSchemas.get(name);
          const invalid = schema && result.structuredContent !== undefined ? validate(result.structuredContent, schema, 'structuredContent') : null;
          if (!result.isError && invalid) problems.push(`${name}: ${invalid}: ${JSON.stringify(result.structuredContent).slice(0, 300)}`);
        }
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
    t.diagnostic(`answers: ${JSON.stringify(tally)}`);
    assert.deepEqual(problems.slice(0, 10), []);
    assert.ok(tally.ok > 0 && tally.isError > 0);
    assert.deepEqual(internalFailures(bridge.logs), []);
    assert.equal(bridge.metrics.framesRejected.get('internal'), 0);
    await computer.close();
  });
});
