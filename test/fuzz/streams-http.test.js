// Fuzz: the bridge's HTTP event streams, GET /mcp (the 2025 revisions) and 2026-07-28
// subscriptions/listen, sent as raw bytes: odd, repeated and oversized Accept, Mcp-Session-Id,
// MCP-Protocol-Version and Last-Event-ID headers, listen bodies with mutated filters, streams opened
// and dropped (mid-write of a notice burst too), half-closed, pipelined on one connection behind
// one another and calls, opened past MCP_MAX_GET_STREAMS and MCP_MAX_SUBSCRIPTIONS, interleaved with
// tool set changes (config reloads). Invariants: every
// refusal is the specific one its headers call for, every stream opened gets what it should (the
// acknowledgement first; a notice after a change), a well-formed caller on other connections keeps
// getting its computer's answers, nothing fails inside the bridge, and once every stream is closed
// the open streams, subscriptions, tool watchers, timers and sockets are back where they started.
// Deterministic: a fixed seed (FUZZ_SEED=<n> replays another) and a fixed number of actions.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { linkComputer, pongText, startTestBridge, until } from '../helpers.js';
import { writeConfig } from '../config/write.js';
import { fuzzSeed, internalFailures, jsonRpcProblems, leaksInternals, mutateValueText, prng, rawHttp, requestHead } from './lib.js';
import { LISTEN_HEADERS, META, SUB, gauges, headWithLines, listenBody, newSession, openGet, openListen, rawStream, resourceTracker, sleep } from './stream-lib.js';
import { readFileSync } from 'node:fs';

/** The server's identity in the _meta of every 2026-07-28 result (the listen's final one too). */
const SERVER_INFO = { name: 'cc-mcp-bridge', title: 'ComputerCraft MCP bridge', version: JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version };


const ACTIONS = 260;
const CONCURRENCY = 4;
const MAX_GET = 5;
const MAX_SUBS = 5;
const GOOD = 77;
const LIST_CHANGED = 'notifications/tools/list_changed';

const luaTool = (name) => ({ name, target: { computerId: GOOD }, lua: 'return 1' });

/** Values for each header of a GET: absent, well-formed, odd, repeated (two lines) or oversized. */
function getHeaders(r, session) {
  const lines = [];
  // each header is the well-formed one half of the time, so streams open often enough
  const add = (name, choices) => {
    const pick = r.chance(0.5) ? choices[1] : r.pick(choices);
    if (pick === undefined) return;
    for (const v of Array.isArray(pick) ? pick : [pick]) lines.push([name, v]);
  };
  add('Accept', [undefined, 'text/event-stream', 'text/event-stream', 'application/json, text/event-stream', 'text/html', '*/*', 'text/event-stream;q=0', ['text/html', 'text/event-stream'], ['text/event-stream', 'text/event-stream'], ',;,;q=', 'TEXT/EVENT-STREAM', 'x'.repeat(2000)]);
  add('MCP-Protocol-Version', [undefined, '2025-11-25', '2025-06-18', '2025-03-26', '2026-07-28', 'garbage', '', ['2025-11-25', '2025-11-25'], ['2025-11-25', '2026-07-28'], 'v'.repeat(3000), '\u00ff']);
  add('Mcp-Session-Id', [undefined, session, session, session, '', ' ', 'garbage', [session, session], [session, 'other'], session + 'x', 's'.repeat(4000), '\u00e9\u00e8']);
  add('Last-Event-ID', [undefined, undefined, '0', '-1', 'x'.repeat(5000), ['1', '2'], '\u00ff\u00fe', '']);
  if (r.chance(0.05)) lines.push(['X-Pad', 'p'.repeat(20_000)]); // over node's 16 KiB of headers
  if (r.chance(0.05)) lines.push(['Mcp-Session-Id', 'bad\u0001byte']); // a byte node's parser refuses
  return lines;
}

/** What a GET with these header lines must get: the status and a word its message must carry. */
function expectedGet(lines, session) {
  const size = lines.reduce((n, [k, v]) => n + k.length + v.length + 4, 0);
  if (lines.some(([, v]) => /[\u0000-\u0008\u000a-\u001f\u007f]/.test(v))) return { status: 400, raw: true };
  if (size > 16 * 1024 - 200) return { status: 431, raw: true };
  const all = (name) => lines.filter(([k]) => k === name).map(([, v]) => v.trim());
  const joined = (name) => (all(name).length ? all(name).join(', ') : undefined);
  const version = joined('MCP-Protocol-Version');
  if (version !== undefined) {
    if (version === '2026-07-28') return { status: 405, word: /2026-07-28 has no GET stream/ };
    if (!['2025-11-25', '2025-06-18', '2025-03-26'].includes(version)) return { status: 400, word: /protocol version|MCP-Protocol-Version/i };
  }
  const accept = (joined('Accept') ?? '').toLowerCase();
  const listed = accept.split(',').some((part) => {
    const [range, ...params] = part.split(';').map((x) => x.trim());
    return range === 'text/event-stream' && !params.some((p) => /^q=0*(\.0*)?$/.test(p));
  });
  if (!listed) return { status: 406, word: /Accept header must list text\/event-stream/ };
  const id = joined('Mcp-Session-Id');
  if (id === undefined || id === '') return { status: 400, word: /needs the Mcp-Session-Id header/ };
  if (id !== session) return { status: 404, word: /Session not found/ };
  return { status: 200 };
}

test('fuzz GET /mcp and subscriptions/listen: hostile headers and bodies, dropped and stalled streams, limits, reloads; every refusal specific, every stream served, a good caller unharmed, nothing left behind', { timeout: 180_000 }, async (t) => {
  const seed = fuzzSeed(0x5eed_6);
  t.diagnostic(`FUZZ_SEED=${seed}`);
  const r = prng(seed);
  const file = writeConfig({ tools: [luaTool('t0')] });
  const bridge = await startTestBridge({
    CC_CONFIG: file,
    LOG_LEVEL: 'info',
    MCP_MAX_GET_STREAMS: String(MAX_GET),
    MCP_MAX_SUBSCRIPTIONS: String(MAX_SUBS),
    MCP_LISTEN_KEEPALIVE_MS: '40',
    MCP_SEND_STALL_MS: '400',
  });
  const port = Number(new URL(bridge.mcpUrl).port);
  const problems = [];
  const tally = { refused: {}, opened: 0, listens: 0, dropped: 0, halfClosed: 0, reloads: 0, goodCalls: 0, limitGet: 0, limitSub: 0, pipelined: 0, droppedEarly: 0 };
  const count = (key) => (tally.refused[key] = (tally.refused[key] ?? 0) + 1);
  let reloads = 0;
  const reload = () => {
    reloads++;
    writeConfig({ tools: [luaTool('t0'), luaTool(`t${reloads}`)] }, file);
    assert.equal(bridge.hub.reload().ok, true);
    tally.reloads++;
  };
  const computer = await linkComputer(bridge, { computerId: GOOD, computerLabel: 'good' });
  try {
    const tracker = resourceTracker();
    await sleep(50);
    const mark = tracker.mark();
    const baseWatching = bridge.tools.watching;
    // the hostile GETs' session (a change goes only on a session's newest stream), and the held one's
    const session = await newSession(port);

    // held the whole run: one GET stream and one listen that must hear of every change
    const heldGet = openGet(port, await newSession(port));
    const heldListen = openListen(port, 'held');
    assert.equal((await heldGet.head).status, 200);
    assert.equal((await heldListen.head).status, 200);
    await until(() => heldListen.events.length === 1);

    // a well-formed caller on connections of its own, the whole time
    let fuzzing = true;
    const good = (async () => {
      let i = 0;
      while (fuzzing) {
        const body = JSON.stringify({ jsonrpc: '2.0', id: `g${i}`, method: 'tools/call', params: { name: 'probe-computers', arguments: {} } });
        const res = await rawHttp(port, requestHead('POST', '/mcp', { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' }, Buffer.byteLength(body)), [Buffer.from(body)]);
        if (res.status !== 200 || !res.body.includes(pongText(GOOD, 'good'))) problems.push(`good call g${i}: ${res.status} ${res.body.slice(0, 200)}`);
        else tally.goodCalls++;
        i++;
        await sleep(2);
      }
    })();

    const held = [];
    const hostileGet = async (r) => {
      const lines = getHeaders(r, session);
      const want = expectedGet(lines, session);
      const s = rawStream(port, headWithLines('GET', '/mcp', lines));
      if (r.chance(0.08)) {
        // gone before (or while) the answer is written
        tally.droppedEarly++;
        await sleep(r.int(3));
        return s.close();
      }
      const { status } = await s.head;
      if (want.raw) {
        // node's parser answered before any route ran
        if (status !== 400 && status !== 431) problems.push(`GET ${JSON.stringify(lines).slice(0, 200)}: ${status}, expected ${want.status}`);
        count(`GET ${status} (parser)`);
        await s.close();
        return;
      }
      if (want.status === 200 && status === 503) {
        await s.done;
        const body = s.json();
        if (!/MCP_MAX_GET_STREAMS/.test(body?.error?.message ?? '')) problems.push(`GET 503 not the limit's: ${s.text.slice(0, 300)}`);
        tally.limitGet++;
        return;
      }
      if (status !== want.status) {
        problems.push(`GET ${JSON.stringify(lines).slice(0, 300)}: ${status}, expected ${want.status}: ${s.text.slice(0, 300)}`);
        await s.close();
        return;
      }
      if (status === 200) {
        tally.opened++;
        if (!/^text\/event-stream/.test(s.headers['content-type'])) problems.push(`GET 200 with ${s.headers['content-type']}`);
        return keepOrDrop(r, s);
      }
      await s.done;
      const body = s.json();
      const wrong = body === null ? ['not JSON'] : jsonRpcProblems(body);
      if (wrong.length || !want.word.test(body.error?.message ?? '')) problems.push(`GET ${status}: ${wrong.join('; ')} ${s.text.slice(0, 300)}`);
      if (leaksInternals(s.text)) problems.push(`GET ${status} leaks internals: ${s.text.slice(0, 300)}`);
      count(`GET ${status}`);
    };

    const hostileListen = async (r, i) => {
      const id = `L${i}`;
      const template = listenBody(id, r.pick([{ toolsListChanged: true }, { toolsListChanged: false }, {}, { toolsListChanged: true, resourceSubscriptions: ['file:///a'] }]));
      const text = r.chance(0.4) ? JSON.stringify(template) : mutateValueText(r, template);
      const body = Buffer.from(text, 'utf8');
      const lines = Object.entries(LISTEN_HEADERS);
      if (r.chance(0.15)) lines.splice(1, 1, ['Accept', r.pick(['application/json', 'text/html', '*/*;q=0', 'text/event-stream'])]);
      if (r.chance(0.1)) lines.push(['Mcp-Method', 'subscriptions/listen']); // repeated: joined by node
      if (r.chance(0.1)) lines.push(['Last-Event-ID', r.pick(['7', 'x'.repeat(3000)])]);
      if (r.chance(0.05)) lines.splice(2, 1, ['MCP-Protocol-Version', r.pick(['2025-11-25', 'nope', '2026-07-28, 2026-07-28'])]);
      const s = rawStream(port, Buffer.concat([headWithLines('POST', '/mcp', lines, body.length), body]));
      if (r.chance(0.08)) {
        tally.droppedEarly++;
        await sleep(r.int(3));
        return s.close();
      }
      const { status } = await s.head;
      if (status === 200 && /^text\/event-stream/.test(s.headers['content-type'] ?? '')) {
        tally.listens++;
        await until(() => s.events.length >= 1 || s.closed);
        const ack = s.events[0];
        if (ack?.method !== 'notifications/subscriptions/acknowledged' || ack.params?._meta?.[SUB] === undefined) problems.push(`listen ${text.slice(0, 200)}: first event ${JSON.stringify(ack)?.slice(0, 200)}`);
        return keepOrDrop(r, s);
      }
      await s.done;
      if (status === null) return problems.push(`listen ${text.slice(0, 200)}: connection closed without an answer`);
      if (status === 202) return count('listen 202');
      const json = s.json();
      const wrong = json === null ? ['not JSON'] : jsonRpcProblems(json);
      if (status >= 500 && status !== 503) wrong.push(`status ${status}`);
      if (status === 503 && json?.error?.code === -32003) tally.limitSub++;
      if (wrong.length) problems.push(`listen ${text.slice(0, 200)}: ${status} ${wrong.join('; ')} ${s.text.slice(0, 300)}`);
      if (leaksInternals(s.text)) problems.push(`listen leaks internals: ${s.text.slice(0, 300)}`);
      count(`listen ${status} ${json?.error?.code ?? ''}`);
    };

    /** An open stream is held for a while, dropped at once, dropped during a burst, or half-closed. */
    const keepOrDrop = async (r, s) => {
      switch (r.int(4)) {
        case 0:
          held.push(s);
          if (held.length > 3) await held.shift().close();
          return;
        case 1:
          tally.dropped++;
          return s.close();
        case 2:
          // a change is being written to it when it goes
          reload();
          tally.dropped++;
          return s.close();
        default:
          tally.halfClosed++;
          s.socket.end();
          await sleep(r.int(30));
          return s.close();
      }
    };

    const burst = async (r) => {
      // past the limits at once: a listen over MCP_MAX_SUBSCRIPTIONS gets 503 with that limit's
      // message; GET streams of fresh sessions past MCP_MAX_GET_STREAMS make a session holding two or
      // more give up its oldest, else get 503 with that limit's message; never more open than allowed
      const kind = r.chance(0.5) ? 'get' : 'listen';
      const n = (kind === 'get' ? MAX_GET : MAX_SUBS) + 2;
      const sessions = kind === 'get' ? await Promise.all(Array.from({ length: n }, () => newSession(port))) : [];
      const all = Array.from({ length: n }, (_, k) => (kind === 'get' ? openGet(port, sessions[k]) : openListen(port, `B${k}-${r.int(1e9)}`)));
      const heads = await Promise.all(all.map((s) => s.head));
      const refused = all.filter((s, k) => heads[k].status === 503);
      for (const s of refused) {
        await s.done;
        const message = s.json()?.error?.message ?? '';
        if (!(kind === 'get' ? /MCP_MAX_GET_STREAMS/ : /MCP_MAX_SUBSCRIPTIONS/).test(message)) problems.push(`${kind} burst 503: ${s.text.slice(0, 300)}`);
      }
      const open = await gauges(port);
      if (open.cc_mcp_get_streams > MAX_GET || open.cc_mcp_subscriptions > MAX_SUBS) problems.push(`over a limit: ${open.cc_mcp_get_streams} GET streams, ${open.cc_mcp_subscriptions} subscriptions`);
      if (kind === 'listen' && refused.length === 0) problems.push(`listen burst: ${n} opened past a limit of ${MAX_SUBS}`);
      if (heads.some((h) => h.status !== 200 && h.status !== 503)) problems.push(`${kind} burst: statuses ${heads.map((h) => h.status)}`);
      if (kind === 'get') tally.limitGet += refused.length;
      else tally.limitSub += refused.length;
      await Promise.all(all.map((s) => s.close()));
    };

    const pipelined = async (r, i) => {
      // two to four requests on one connection, streams and a call: node queues all but the first
      // answer, and a queued stream must still go when the connection does
      const requests = Array.from({ length: 2 + r.int(3) }, (_, k) => {
        const pick = r.int(3);
        if (pick === 0) return headWithLines('GET', '/mcp', [['Accept', 'text/event-stream'], ['Mcp-Session-Id', session]], undefined, { close: false });
        const body = JSON.stringify(pick === 1 ? listenBody(`P${i}-${k}`) : { jsonrpc: '2.0', id: `p${i}-${k}`, method: 'tools/call', params: { name: 'list-computers', arguments: {} } });
        const headers = pick === 1 ? Object.entries(LISTEN_HEADERS) : [['Content-Type', 'application/json'], ['Accept', 'application/json, text/event-stream']];
        return Buffer.concat([headWithLines('POST', '/mcp', headers, Buffer.byteLength(body), { close: false }), Buffer.from(body)]);
      });
      const s = rawStream(port, Buffer.concat(requests));
      const { status } = await s.head;
      if (status !== 200 && status !== 503 && status !== null) problems.push(`pipelined: first answer ${status}: ${s.text.slice(0, 200)}`);
      tally.pipelined++;
      await sleep(r.int(40));
      return r.chance(0.3) ? keepOrDrop(r, s) : s.close();
    };

    let next = 0;
    const worker = async (w) => {
      const wr = prng(seed + w);
      while (next < ACTIONS) {
        const i = next++;
        const pick = wr.int(20);
        if (pick < 7) await hostileGet(wr);
        else if (pick < 14) await hostileListen(wr, i);
        else if (pick < 16) await pipelined(wr, i);
        else if (pick < 18) reload();
        else await burst(wr);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, (_, w) => worker(w)));

    // a client that never reads, on each kind: cut off once 64 KiB wait behind the full socket buffers
    // (driven by tool set changes), or once MCP_SEND_STALL_MS pass with bytes waiting
    const before = await gauges(port);
    const stalledGet = rawStream(port, headWithLines('GET', '/mcp', [['Accept', 'text/event-stream'], ['Mcp-Session-Id', await newSession(port)]]), { pause: true });
    const stalledListen = openListen(port, 'stalled');
    stalledListen.socket.on('connect', () => stalledListen.socket.pause());
    const flip = (on) => ({ id: 'flip', tools: () => (on ? [{ name: 'flip', title: 'flip', description: 'flip', inputSchema: { type: 'object' } }] : []) });
    let flips = 0;
    for (;;) {
      const now = await gauges(port);
      if (now.cc_mcp_get_streams_cut_off_total > before.cc_mcp_get_streams_cut_off_total && now.cc_mcp_subscriptions_cut_off_total > before.cc_mcp_subscriptions_cut_off_total) break;
      assert.ok(flips < 3_000_000, `the stalled streams were never cut off: ${JSON.stringify(now)}`);
      for (let k = 0; k < 1000; k++) {
        bridge.tools.setSource(flip(flips++ % 2 === 0));
        await new Promise((res) => setImmediate(res));
        await new Promise((res) => setImmediate(res));
      }
    }
    bridge.tools.removeSource('flip');
    await Promise.all([stalledGet.close(), stalledListen.close()]);

    fuzzing = false;
    await good;
    // the held streams heard of the changes (the flips as well), the listen with its own id
    reload();
    const heard = heldGet.events.length;
    const heardListen = heldListen.events.length;
    reload();
    await until(() => heldGet.events.length > heard && heldListen.events.length > heardListen, 5, 10_000).catch(() =>
      assert.fail(`held streams: GET ${heldGet.closed ? 'closed' : 'open'} ${heldGet.events.length} events, listen ${heldListen.closed ? 'closed' : 'open'} ${heldListen.events.length}`),
    );
    assert.ok(heldGet.events.every((e) => e.method === LIST_CHANGED && e.id === undefined), JSON.stringify(heldGet.events.slice(0, 3)));
    assert.ok(heldListen.events.slice(1).every((e) => e.method === LIST_CHANGED && e.params._meta[SUB] === 'held'));
    assert.ok(heldGet.comments > 0 && heldListen.comments > 0, 'keep-alive comments on the held streams');

    await Promise.all([heldGet, heldListen, ...held].map((s) => s.close()));
    const g = await until(async () => {
      const now = await gauges(port);
      return now.cc_mcp_get_streams === 0 && now.cc_mcp_subscriptions === 0 && now.cc_http_answers_writing === 0 && now.cc_mcp_calls_tracked === 0 && now;
    }, 5, 10_000).catch(async () => assert.fail(`left after every stream closed: ${JSON.stringify(await gauges(port))}`));
    assert.equal(bridge.dispatcher.subscriptions.size, 0);
    assert.equal(bridge.tools.watching, baseWatching, 'every stream\'s tool watcher dropped');
    // timers and sockets made since the mark are gone (the link's and the listeners' were made before)
    await until(async () => {
      await sleep(20);
      return tracker.leftSince(mark).length === 0;
    }, 5, 10_000).catch(() => assert.fail(`left behind:\n${tracker.leftSince(mark).map((x) => `${x.type}\n${x.stack}`).join('\n\n')}`));
    tracker.disable();

    t.diagnostic(`tally ${JSON.stringify(tally)}; flips to cut off the stalled pair ${flips}; counters ${JSON.stringify({ getCut: g.cc_mcp_get_streams_cut_off_total, subCut: g.cc_mcp_subscriptions_cut_off_total })}`);
    assert.deepEqual(problems, []);
    assert.ok(tally.opened > 10 && tally.listens > 10 && tally.dropped > 5 && tally.limitGet > 0 && tally.limitSub > 0 && tally.goodCalls > 10, JSON.stringify(tally));
    assert.deepEqual(internalFailures(bridge.logs), []);
  } finally {
    await computer.close();
    await bridge.close();
  }
});

test('fuzz event streams at shutdown: GET streams and listens open, more opening and reloads under way while the bridge closes; each listen is completed, each stream ended, late opens refused as shutting down, and nothing the bridge made is left', { timeout: 120_000 }, async (t) => {
  const seed = fuzzSeed(0x5eed_8);
  t.diagnostic(`FUZZ_SEED=${seed}`);
  const r = prng(seed);
  const tracker = resourceTracker();
  const mark = tracker.mark();
  const file = writeConfig({ tools: [luaTool('t0')] });
  const bridge = await startTestBridge({ CC_CONFIG: file, LOG_LEVEL: 'info', MCP_LISTEN_KEEPALIVE_MS: '30' });
  const port = Number(new URL(bridge.mcpUrl).port);
  const sessions = await Promise.all(Array.from({ length: 4 }, () => newSession(port)));
  const gets = Array.from({ length: 8 }, () => openGet(port, r.pick(sessions)));
  const listens = Array.from({ length: 8 }, (_, k) => openListen(port, `S${k}`, r.pick([{ toolsListChanged: true }, {}])));
  await Promise.all([...gets, ...listens].map((s) => s.head));
  await until(() => listens.every((s) => s.events.length >= 1));
  let n = 0;
  const late = [];
  const opener = setInterval(() => {
    if (late.length < 60) late.push(r.chance(0.5) ? openGet(port, r.pick(sessions)) : openListen(port, `late${n}`));
    writeConfig({ tools: [luaTool('t0'), luaTool(`t${++n}`)] }, file);
    bridge.hub.reload();
  }, 1);
  // requests begun before the close and finished after it: their connections stay for the grace period
  const halfway = [];
  for (let k = 0; k < 6; k++) {
    const body = Buffer.from(JSON.stringify(listenBody(`half${k}`)));
    const whole = k % 2 ? headWithLines('GET', '/mcp', [['Accept', 'text/event-stream'], ['Mcp-Session-Id', sessions[0]]]) : Buffer.concat([headWithLines('POST', '/mcp', Object.entries(LISTEN_HEADERS), body.length), body]);
    const s = rawStream(port, whole.subarray(0, whole.length - 1));
    s.rest = whole.subarray(whole.length - 1);
    halfway.push(s);
  }
  await sleep(20);
  const closing = bridge.close(2000);
  for (const s of halfway) s.socket.write(s.rest);
  late.push(...halfway);
  await closing;
  clearInterval(opener);
  for (const s of listens) {
    await s.done;
    assert.deepEqual(s.events.at(-1), { jsonrpc: '2.0', id: s.events[0].params._meta[SUB], result: { resultType: 'complete', _meta: { [SUB]: s.events[0].params._meta[SUB], 'io.modelcontextprotocol/serverInfo': SERVER_INFO } } });
  }
  for (const s of gets) await s.done;
  const outcomes = {};
  for (const s of late) {
    await s.done;
    const text = s.status === null ? 'refused' : s.status === 200 ? (s.events.at(-1)?.result?.resultType === 'complete' || s.headers['content-type'] === 'text/event-stream' ? 'served, ended' : 'served?') : `${s.status} ${s.json()?.error?.message}`;
    const label = text.replace(/"[^"]*"/g, '"…"');
    outcomes[label] = (outcomes[label] ?? 0) + 1;
    if (s.status !== null && s.status !== 200) assert.equal(s.status, 503, text);
    if (s.status === 503) assert.match(text, /shutting down/);
  }
  t.diagnostic(`late opens: ${JSON.stringify(outcomes)}; reloads ${n}`);
  await until(async () => {
    await sleep(20);
    return tracker.leftSince(mark).length === 0;
  }, 5, 10_000).catch(() => assert.fail(`left behind:\n${tracker.leftSince(mark).map((x) => `${x.type}\n${x.stack}`).join('\n\n')}`));
  tracker.disable();
  assert.deepEqual(internalFailures(bridge.logs), []);
});

/** What a filter must get: the -32602 message's start for its first malformed field, or the honoured filter. */
function filterOracle(notifications) {
  if (notifications === undefined) return { problem: 'params.notifications is required' };
  if (notifications === null || typeof notifications !== 'object' || Array.isArray(notifications)) return { problem: 'params.notifications must be an object' };
  for (const field of ['toolsListChanged', 'promptsListChanged', 'resourcesListChanged']) {
    if (Object.hasOwn(notifications, field) && typeof notifications[field] !== 'boolean') return { problem: `params.notifications.${field} must be a boolean, not ` };
  }
  const uris = notifications.resourceSubscriptions;
  if (uris !== undefined && !(Array.isArray(uris) && uris.every((u) => typeof u === 'string'))) return { problem: 'params.notifications.resourceSubscriptions must be an array of strings, not ' };
  return { honoured: notifications.toolsListChanged === true ? { toolsListChanged: true } : {} };
}

const FILTER_VALUES = [true, false, null, 0, 1, -1.5, '', 'yes', 'x'.repeat(5000), [], ['a'], ['a', 'b'], [['x']], [1], ['a', null], [{}], {}, { a: 1 }, { toolsListChanged: true }];

test('fuzz subscriptions/listen filters against an oracle: each field of the filter absent or of any JSON type; a malformed one is -32602 naming it in a short message, a good one acknowledged with exactly what is honoured', { timeout: 120_000 }, async (t) => {
  const seed = fuzzSeed(0x5eed_9);
  t.diagnostic(`FUZZ_SEED=${seed}`);
  const r = prng(seed);
  const bridge = await startTestBridge({ LOG_LEVEL: 'info' });
  const port = Number(new URL(bridge.mcpUrl).port);
  const outcomes = { acked: 0, refused: 0 };
  try {
    for (let i = 0; i < 300; i++) {
      let notifications;
      if (r.chance(0.05)) notifications = r.pick([undefined, null, [], 'x', 1, true]);
      else {
        notifications = {};
        for (const field of ['toolsListChanged', 'promptsListChanged', 'resourcesListChanged', 'resourceSubscriptions', '__proto__', 'constructor', 'example.com/x']) {
          if (r.chance(0.5)) Object.defineProperty(notifications, field, { value: r.chance(0.5) && field !== 'resourceSubscriptions' ? r.chance(0.5) : r.pick(FILTER_VALUES), enumerable: true });
        }
      }
      const want = filterOracle(notifications);
      const id = r.chance(0.5) ? `F${i}` : i;
      const body = { jsonrpc: '2.0', id, method: 'subscriptions/listen', params: { _meta: META } };
      if (notifications !== undefined) body.params.notifications = notifications;
      const bytes = Buffer.from(JSON.stringify(body));
      const s = rawStream(port, Buffer.concat([headWithLines('POST', '/mcp', Object.entries(LISTEN_HEADERS), bytes.length), bytes]));
      const { status } = await s.head;
      const sent = JSON.stringify(notifications)?.slice(0, 200);
      if (want.problem) {
        await s.done;
        const answer = s.json();
        assert.equal(status, 400, `${sent}: ${s.text.slice(0, 300)}`);
        assert.equal(answer.id, id);
        assert.equal(answer.error.code, -32602);
        assert.ok(answer.error.message.startsWith(`Invalid params: ${want.problem}`) || answer.error.message.includes(want.problem), `${sent}: ${answer.error.message}`);
        assert.ok(answer.error.message.length < 400, `${sent}: a ${answer.error.message.length}-character message`);
        outcomes.refused++;
      } else {
        assert.equal(status, 200, `${sent}: ${s.text.slice(0, 300)}`);
        await until(() => s.events.length >= 1 || s.closed);
        assert.deepEqual(s.events[0]?.params, { _meta: { [SUB]: id }, notifications: want.honoured }, sent);
        await s.close();
        outcomes.acked++;
      }
    }
    await until(() => bridge.dispatcher.subscriptions.size === 0 && bridge.tools.watching === 0);
    t.diagnostic(JSON.stringify(outcomes));
    assert.ok(outcomes.acked > 20 && outcomes.refused > 20, JSON.stringify(outcomes));
    assert.deepEqual(internalFailures(bridge.logs), []);
  } finally {
    await bridge.close();
  }
});
