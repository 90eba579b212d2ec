// Fuzz: 2026-07-28 subscriptions/listen over stdio, `node dist/index.js --stdio` a real child with
// MCP_PORT so HTTP listens share MCP_MAX_SUBSCRIPTIONS with it. Rounds of seeded lines written in
// pieces cut anywhere: listens with random and mutated filters and ids, listens reusing an open id,
// notifications/cancelled for open and unknown ids, mangled lines, good tool calls; HTTP listens
// opened and dropped (MCP_MAX_SUBSCRIPTIONS_PER_CLIENT and the total end the oldest); tool set changes (CC_CONFIG + SIGHUP) between rounds; then SIGTERM with
// subscriptions open on both transports and listens still coming. Invariants: stdout stays one JSON-RPC message per line, each
// request id is acknowledged or answered (a refusal says which limit or which id), a change reaches
// every open subscription that asked for it, once, with its id, and none that was cancelled, the
// subscriptions gauge matches what is open, a good call always gets its answer, nothing fails inside
// the bridge, and shutdown completes every open listen (a late one is completed, refused or never
// read, never left acknowledged without an answer) and exits 0.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { until } from '../helpers.js';
import { writeConfig } from '../config/write.js';
import { spawnStdio } from '../surfaces/stdio-child.js';
import { fuzzSeed, internalFailures, jsonRpcProblems, mangleText, mutateValueText, prng } from './lib.js';
import { META, SUB, gauges, listenBody, openListen, sleep } from './stream-lib.js';
import { readFileSync } from 'node:fs';

/** The server's identity in the _meta of every 2026-07-28 result (the listen's final one too). */
const SERVER_INFO = { name: 'cc-mcp-bridge', title: 'ComputerCraft MCP bridge', version: JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version };


const ROUNDS = 31;
const PER_ROUND = 10;
const MAX_SUBS = 6;
const PER_CLIENT = 4;
const ACK = 'notifications/subscriptions/acknowledged';
const CHANGED = 'notifications/tools/list_changed';
const FILTERS = [{ toolsListChanged: true }, { toolsListChanged: true }, { toolsListChanged: false }, {}, { promptsListChanged: true }, { toolsListChanged: true, resourceSubscriptions: [] }];
const luaTool = (name) => ({ name, target: { computerId: 1 }, lua: 'return 1' });
const key = (id) => JSON.stringify(id);
const subId = (m) => m.params?._meta?.[SUB];

test('fuzz stdio subscriptions/listen: hostile listens, cancels and reloads in rounds, HTTP listens on the same limit, then SIGTERM: every id acknowledged or answered, changes reach exactly the open subscriptions, shutdown completes them', { timeout: 180_000 }, async (t) => {
  const seed = fuzzSeed(0x5eed_7);
  t.diagnostic(`FUZZ_SEED=${seed}`);
  const r = prng(seed);
  const file = writeConfig({ tools: [luaTool('t0')] });
  const bridge = spawnStdio({ CC_CONFIG: file, MCP_PORT: '0', LOG_LEVEL: 'info', MCP_MAX_SUBSCRIPTIONS: String(MAX_SUBS), MCP_MAX_SUBSCRIPTIONS_PER_CLIENT: String(PER_CLIENT), MCP_LISTEN_KEEPALIVE_MS: '50' });
  const problems = [];
  const tally = { listens: 0, acked: 0, replaced: 0, refusedFull: 0, refusedDuplicate: 0, invalid: 0, cancels: 0, reloads: 0, http: 0, goodCalls: 0 };
  try {
    await until(() => /also over HTTP at http:\/\/\S+/.test(bridge.out.stderr));
    const port = Number(new URL(/also over HTTP at (http:\/\/\S+)/.exec(bridge.out.stderr)[1]).port);
    /** Subscriptions open on stdio by key(id): whether they asked for tool changes, notices seen so far. */
    const open = new Map();
    /** Ids cancelled, with how many messages had arrived when the cancel was written. */
    const cancelled = new Map();
    const httpOpen = [];
    /** Ids the bridge ended to make room: each must be followed by its notifications/cancelled. */
    const ended = [];
    let seen = 0;
    let reloads = 0;
    let n = 0;

    /** Reads what arrived since the last look: acks open subscriptions, answers close request ids. */
    const settle = (awaiting) => {
      for (; seen < bridge.messages.length; seen++) {
        const m = bridge.messages[seen];
        if (m.method === ACK) {
          const k = key(subId(m));
          if (open.has(k)) problems.push(`second ack for open ${k}`);
          open.set(k, { tools: m.params.notifications?.toolsListChanged === true, notices: 0, id: subId(m) });
          awaiting.delete(k);
          tally.acked++;
        } else if (m.method === CHANGED) {
          const k = key(subId(m));
          if (open.has(k)) open.get(k).notices++;
          else if (cancelled.has(k) && seen > cancelled.get(k)) problems.push(`notice for ${k} after its cancel`);
        } else if ('id' in m && open.has(key(m.id)) && m.error?.code === -32003) {
          // an open one ended to make room (MCP_MAX_SUBSCRIPTIONS_PER_CLIENT, or at MCP_MAX_SUBSCRIPTIONS an
          // HTTP listen took the place of this client's oldest): answered, then cancelled
          if (!/^Subscription ended: .*\((MCP_MAX_SUBSCRIPTIONS_PER_CLIENT|MCP_MAX_SUBSCRIPTIONS)\)/.test(m.error.message) || m.error.data?.variable === undefined) problems.push(`ended without saying why: ${JSON.stringify(m)}`);
          open.delete(key(m.id));
          cancelled.set(key(m.id), seen);
          ended.push(key(m.id));
          tally.replaced++;
        } else if ('id' in m) {
          const wrong = jsonRpcProblems(m);
          if (wrong.length) problems.push(`${wrong.join('; ')}: ${JSON.stringify(m).slice(0, 300)}`);
          const message = m.error?.message ?? '';
          if (m.error?.code === -32003) {
            tally.refusedFull++;
            if (!/MCP_MAX_SUBSCRIPTIONS/.test(message)) problems.push(`-32003 without its limit: ${message}`);
          }
          else if (m.error?.code === -32602 && /already open/.test(message)) tally.refusedDuplicate++;
          else if (m.error) tally.invalid++;
          awaiting.delete(key(m.id));
        }
      }
    };

    for (let round = 0; round < ROUNDS; round++) {
      const awaiting = new Set();
      const opening = round % 2 === 0;
      let text = '';
      for (let k = 0; k < PER_ROUND; k++) {
        const i = n++;
        // rounds that open and rounds that cancel alternate: a listen can end the client's oldest
        // (MCP_MAX_SUBSCRIPTIONS_PER_CLIENT), so a cancel or a duplicate id in the same round would
        // race it; in a cancelling round nothing opens, and what is open is known
        let pick = opening ? r.pick(['listen', 'listen', 'listen', 'mutated', 'mutated', 'mangled', 'stray cancel', 'call']) : r.pick(['duplicate', 'duplicate', 'cancel', 'cancel', 'cancel', 'stray cancel', 'call']);
        if ((pick === 'duplicate' || pick === 'cancel') && open.size === 0) pick = 'call';
        if (pick === 'listen') {
          const id = r.chance(0.5) ? `L${i}` : i;
          text += JSON.stringify(listenBody(id, r.pick(FILTERS))) + '\n';
          awaiting.add(key(id));
          tally.listens++;
        } else if (pick === 'mutated') {
          const id = `M${i}`;
          const line = mutateValueText(r, listenBody(id, r.pick(FILTERS)));
          text += line.replace(/[\r\n]/g, ' ') + '\n';
          // its id survived the mutation: it must be acknowledged or answered
          try {
            if (JSON.parse(line).id === id) awaiting.add(key(id));
          } catch {
            // not JSON: a -32700 with id null
          }
        } else if (pick === 'duplicate') {
          // an id that is open now: refused as a duplicate (on stdio ids must be unique while open)
          const sub = open.get(r.pick([...open.keys()]));
          text += JSON.stringify(listenBody(sub.id)) + '\n';
        } else if (pick === 'cancel') {
          const k = r.pick([...open.keys()]);
          const sub = open.get(k);
          open.delete(k);
          cancelled.set(k, bridge.messages.length);
          text += JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: sub.id, reason: 'fuzz' } }) + '\n';
          tally.cancels++;
        } else if (pick === 'stray cancel') {
          text += JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: r.pick(['nope', 12345, null, {}]), reason: 'fuzz' } }) + '\n';
        } else if (pick === 'mangled') {
          text += mangleText(r, JSON.stringify(listenBody(`X${i}`))).toString('utf8').replace(/[\r\n]/g, ' ') + '\n';
        } else {
          const id = `g${i}`;
          text += JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'list-computers', arguments: {}, _meta: META } }) + '\n';
          awaiting.add(key(id));
        }
      }
      // written in pieces cut anywhere
      let bytes = Buffer.from(text);
      while (bytes.length) {
        const cut = 1 + r.int(Math.min(bytes.length, 2000));
        bridge.raw(bytes.subarray(0, cut));
        bytes = bytes.subarray(cut);
      }
      // an HTTP listen now and then, on the same limit; some dropped again
      if (opening && r.chance(0.5)) {
        const s = openListen(port, `H${round}`);
        const { status } = await s.head;
        if (status === 200) {
          httpOpen.push(s);
          tally.http++;
        } else if (status !== 503) problems.push(`HTTP listen ${status}`);
      }
      if (httpOpen.length && r.chance(0.3)) await httpOpen.splice(r.int(httpOpen.length), 1)[0].close();
      await until(() => {
        settle(awaiting);
        return awaiting.size === 0;
      }, 5, 20_000).catch(() => assert.fail(`round ${round}: no ack or answer for ${[...awaiting]}: ${text.split('\n').filter((l) => [...awaiting].some((k) => l.includes(`"id":${k}`))).map((l) => l.slice(0, 300))} ${bridge.messages.filter((m) => JSON.stringify(m).includes([...awaiting][0])).map((m) => JSON.stringify(m).slice(0, 300))}`));

      // the gauge counts what is open on both transports (HTTP closes are seen by the bridge a moment later)
      await until(async () => {
        const g = await gauges(port);
        settle(new Set());
        return g.cc_mcp_subscriptions === open.size + httpOpen.length;
      }, 5, 10_000).catch(async () =>
        assert.fail(`round ${round}: gauge ${(await gauges(port)).cc_mcp_subscriptions}, open ${open.size} + ${httpOpen.length} over HTTP: ${[...open.keys()]}\n${text}\n${bridge.messages.slice(-25).map((m) => JSON.stringify(m).slice(0, 250)).join('\n')}`),
      );

      if (round % 4 === 3) {
        // a tool set change reaches each open subscription that asked for it, once
        const before = new Map([...open].map(([k, s]) => [k, s.notices]));
        const httpBefore = httpOpen.map((s) => s.events.length);
        reloads++;
        writeConfig({ tools: [luaTool('t0'), luaTool(`t${reloads}`)] }, file);
        bridge.kill('SIGHUP');
        tally.reloads++;
        await until(() => (bridge.out.stderr.match(/config file reloaded/g) ?? []).length === reloads);
        const want = [...open].filter(([, s]) => s.tools).map(([k]) => k);
        await until(() => {
          settle(new Set());
          return want.every((k) => open.get(k).notices === before.get(k) + 1) && httpOpen.every((s, j) => s.events.length > httpBefore[j]);
        }, 5, 20_000).catch(() => assert.fail(`reload ${reloads}: notices ${JSON.stringify([...open].map(([k, s]) => [k, s.tools, before.get(k), s.notices]))}`));
        for (const [k, s] of open) if (!s.tools && s.notices > 0) problems.push(`${k} did not ask for tool changes but got ${s.notices}`);
      }
    }
    settle(new Set());
    for (const k of ended) {
      if (!bridge.messages.some((m) => m.method === 'notifications/cancelled' && key(m.params?.requestId) === k && /subscription ended/.test(m.params.reason))) problems.push(`ended ${k} without its notifications/cancelled`);
    }
    for (const m of bridge.messages) {
      if (typeof m.id !== 'string' || !/^g\d+$/.test(m.id)) continue;
      if (Array.isArray(m.result?.structuredContent?.computers)) tally.goodCalls++;
      else problems.push(`good call ${m.id}: ${JSON.stringify(m).slice(0, 200)}`);
    }

    // shutdown with subscriptions open on both transports: each listen is answered complete
    const stillOpen = [...open.values()];
    assert.ok(stillOpen.length + httpOpen.length > 0, 'something open at shutdown');
    bridge.kill('SIGTERM');
    // listens keep coming while it shuts down
    const late = [];
    for (let k = 0; k < 200 && bridge.exitCode === null; k++) {
      late.push(`late${k}`);
      bridge.send(listenBody(`late${k}`));
      await sleep(1);
    }
    const { code } = await bridge.exited;
    assert.equal(code, 0, bridge.out.stderr.slice(-2000));
    settle(new Set());
    // each late one: taken before the signal (acknowledged, then completed or ended for a newer one),
    // refused as shutting down, or never read; never acknowledged and left without an answer
    const lateOutcomes = {};
    for (const id of late) {
      const acked = bridge.messages.some((m) => m.method === ACK && subId(m) === id);
      const answer = bridge.messages.find((m) => m.id === id);
      const outcome = !answer ? (acked ? 'acknowledged, never answered' : 'not read') : answer.result?.resultType === 'complete' ? 'completed' : /shutting down/.test(answer.error?.message) ? 'refused: shutting down' : /^Too many subscriptions/.test(answer.error?.message) ? 'refused: full' : /^Subscription ended/.test(answer.error?.message) ? 'ended for a newer one' : `answered ${JSON.stringify(answer).slice(0, 200)}`;
      lateOutcomes[outcome] = (lateOutcomes[outcome] ?? 0) + 1;
      if (outcome.startsWith('answered') || outcome === 'acknowledged, never answered' || (acked && outcome.startsWith('refused')) || (!acked && outcome === 'completed')) problems.push(`late ${id}: ${outcome}${acked ? ' (acknowledged)' : ''}`);
    }
    t.diagnostic(`listens sent during shutdown: ${JSON.stringify(lateOutcomes)}`);
    const lateAcked = late.some((id) => bridge.messages.some((m) => m.method === ACK && subId(m) === id));
    for (const sub of stillOpen) {
      const answer = bridge.messages.find((m) => 'id' in m && key(m.id) === key(sub.id) && (m.result || m.error));
      // a late listen taken before the signal may have ended it for a newer one
      if (lateAcked && /^Subscription ended/.test(answer?.error?.message)) continue;
      assert.deepEqual(answer?.result, { resultType: 'complete', _meta: { [SUB]: sub.id, 'io.modelcontextprotocol/serverInfo': SERVER_INFO } }, `listen ${key(sub.id)} at shutdown: ${JSON.stringify(answer)}`);
      assert.ok(bridge.messages.some((m) => m.method === 'notifications/cancelled' && key(m.params.requestId) === key(sub.id)));
    }
    for (const s of httpOpen) {
      await s.done;
      assert.equal(s.events.at(-1)?.result?.resultType, 'complete', `HTTP listen at shutdown: ${JSON.stringify(s.events.at(-1))}`);
    }
    t.diagnostic(`tally ${JSON.stringify(tally)}; open at shutdown ${stillOpen.length} + ${httpOpen.length} over HTTP; messages ${bridge.messages.length}`);
    assert.deepEqual(problems, []);
    assert.ok(tally.acked > 10 && tally.replaced > 0 && tally.refusedDuplicate > 0 && tally.cancels > 5 && tally.reloads > 3 && tally.goodCalls > 5, JSON.stringify(tally));
    assert.deepEqual(internalFailures(bridge.out.stderr.split('\n')), []);
  } finally {
    if (bridge.exitCode === null && bridge.signalCode === null) {
      bridge.kill('SIGKILL');
      await bridge.exited;
    }
  }
});
