// The metrics module and GET /metrics over real HTTP: format, counters moving, the auth guard.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LATENCY_BUCKETS, Metrics, PUBLIC_METRICS, escapeLabel } from '../dist/metrics.js';
import { FakeComputer, callTool, linkComputer, rpc, withBridge, until } from './helpers.js';

/** metric name{labels} -> value, from the text format. */
function samples(text) {
  const map = new Map();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    map.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return map;
}

test('render: HELP and TYPE for every metric, cumulative histogram, escaped labels', () => {
  const m = new Metrics();
  m.addGauge({ name: 'cc_test_gauge', help: 'A test gauge.', read: () => 7 });
  m.callEnded('exec-lua', 'ok', 3);
  m.callEnded('exec-lua', 'ok', 700);
  m.callEnded('exec-lua', 'timeout', 1_000_000);
  m.linksRefused.inc('unauthorized');
  m.upstreamStates = () => [{ server: 'a"b', state: 'ready' }];
  const text = m.render();
  const s = samples(text);
  assert.equal(s.get('cc_bridge_up'), 1);
  assert.equal(s.get('cc_test_gauge'), 7);
  assert.equal(s.get('cc_tool_calls_total{tool="exec-lua",outcome="ok"}'), 2);
  assert.equal(s.get('cc_tool_calls_total{tool="exec-lua",outcome="timeout"}'), 1);
  assert.equal(s.get('cc_tool_call_duration_seconds_bucket{le="0.005"}'), 1);
  assert.equal(s.get('cc_tool_call_duration_seconds_bucket{le="0.5"}'), 1);
  assert.equal(s.get('cc_tool_call_duration_seconds_bucket{le="1"}'), 2);
  assert.equal(s.get(`cc_tool_call_duration_seconds_bucket{le="${LATENCY_BUCKETS.at(-1)}"}`), 2);
  assert.equal(s.get('cc_tool_call_duration_seconds_bucket{le="+Inf"}'), 3);
  assert.equal(s.get('cc_tool_call_duration_seconds_count'), 3);
  // summed in whole ms, shown in seconds
  assert.equal(s.get('cc_tool_call_duration_seconds_sum'), 1000.703);
  assert.equal(s.get('cc_links_refused_total{reason="unauthorized"}'), 1);
  assert.equal(s.get('cc_upstream_server_up{server="a\\"b",state="ready"}'), 1);
  for (const name of new Set([...s.keys()].map((k) => k.replace(/\{.*$/, '').replace(/_(bucket|sum|count)$/, '')))) {
    assert.ok(text.includes(`# TYPE ${name} `), `TYPE for ${name}`);
    assert.ok(text.includes(`# HELP ${name} `), `HELP for ${name}`);
  }
  assert.equal(escapeLabel('a\\b\n"c"'), 'a\\\\b\\n\\"c\\"');
});

test('GET /metrics: counters move with links, frames, calls and refusals; pending counts return to 0', () =>
  withBridge({}, async (bridge) => {
    const base = new URL(bridge.mcpUrl).origin;
    const scrape = async () => {
      const res = await fetch(`${base}/metrics`);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
      return samples(await res.text());
    };
    const before = await scrape();
    assert.equal(before.get('cc_links'), 0);
    assert.equal(before.get('cc_links_linked_total'), 0);
    const computer = await linkComputer(bridge, {
      computerId: 3,
      onRequest: (f) => (f.method === 'ping' ? { ok: true, result: 'pong from 3 (Label: null)' } : null),
    });
    await callTool(bridge, 'probe-computers');
    await callTool(bridge, 'exec-lua', { computerId: 3, code: 'x', timeoutMs: 50 });
    await rpc(bridge.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'no-such-tool-' + Math.random() } });
    computer.send('not json');
    computer.send({ type: 'response', id: 'nobody-asked', ok: true });
    const bad = new FakeComputer(bridge.linkUrl);
    await bad.link({ type: 'hello', computerId: -1 });
    await until(async () => (await scrape()).get('cc_link_frames_rejected_total{reason="unknown_id"}') === 1);
    const s = await scrape();
    assert.equal(s.get('cc_links'), 1);
    assert.equal(s.get('cc_links_linked_total'), 1);
    assert.equal(s.get('cc_links_refused_total{reason="invalid"}'), 1);
    assert.equal(s.get('cc_tool_calls_total{tool="probe-computers",outcome="ok"}'), 1);
    assert.equal(s.get('cc_tool_calls_total{tool="exec-lua",outcome="timeout"}'), 1);
    assert.equal(s.get('cc_tool_calls_total{tool="(unknown)",outcome="unknown_tool"}'), 1, 'unknown names share one label');
    assert.equal(s.get('cc_tool_call_duration_seconds_count'), 3);
    assert.equal(s.get('cc_link_frames_rejected_total{reason="invalid"}'), 1);
    assert.equal(s.get('cc_link_frames_rejected_total{reason="invalid_hello"}'), 1);
    // in: hello, pong, 2 bad frames, bad hello; out: hello-ok, ping, exec, cancel, hello-error
    assert.equal(s.get('cc_link_frames_in_total'), 5);
    assert.equal(s.get('cc_link_frames_out_total'), 5);
    assert.equal(s.get('cc_tool_calls_in_flight'), 0);
    assert.equal(s.get('cc_link_requests_pending'), 0);
    assert.equal(s.get('cc_mcp_calls_tracked'), 0);
    assert.equal(s.get('cc_link_connections_pre_hello'), 0);
    await computer.close();
    await until(async () => (await scrape()).get('cc_links') === 0);
  }));

test('with MCP_AUTH_TOKEN, /metrics without the token says only that the bridge is up', () =>
  withBridge({ MCP_AUTH_TOKEN: 'metrics-token-0123456789' }, async (bridge) => {
    const url = `${new URL(bridge.mcpUrl).origin}/metrics`;
    assert.equal(await (await fetch(url)).text(), PUBLIC_METRICS);
    const full = await (await fetch(url, { headers: { authorization: 'Bearer metrics-token-0123456789' } })).text();
    assert.ok(samples(full).has('cc_links'));
    await fetch(bridge.mcpUrl, { method: 'POST' });
    const after = samples(await (await fetch(url, { headers: { authorization: 'Bearer metrics-token-0123456789' } })).text());
    assert.equal(after.get('cc_http_unauthorized_total'), 1);
  }));

test('/metrics shows each upstream server of CC_CONFIG in its state', async () => {
  const { writeConfig } = await import('./config/write.js');
  const { fixtureServer } = await import('./upstream/fixture.js');
  const config = writeConfig({ servers: [fixtureServer('fx')] });
  await withBridge({ CC_CONFIG: config }, async (bridge) => {
    const url = `${new URL(bridge.mcpUrl).origin}/metrics`;
    await until(async () => samples(await (await fetch(url)).text()).get('cc_upstream_server_up{server="fx",state="up"}') === 1);
  });
});

test('render at its edges (found by mutation testing): a call of exactly a bucket\'s bound is in that bucket; infinite values as +Inf and -Inf; a counter gauge typed counter; every label value escaped; the text ends with a newline', () => {
  const m = new Metrics();
  m.callEnded('t', 'ok', 5); // 0.005 s: le="0.005" holds it (Prometheus buckets are "less than or equal")
  m.callEnded('t', 'ok', 10);
  m.addGauge({ name: 'cc_test_up_inf', help: 'h', read: () => Infinity });
  m.addGauge({ name: 'cc_test_down_inf', help: 'h', read: () => -Infinity });
  m.addGauge({ name: 'cc_test_grows_total', help: 'h', read: () => 3, type: 'counter' });
  m.callEnded('a"b', 'c\\d', 1);
  m.framesRejected.inc('x"y');
  m.upstreamStates = () => [{ server: 's', state: 'a\nb' }];
  const text = m.render();
  const s = samples(text);
  assert.equal(s.get('cc_tool_call_duration_seconds_bucket{le="0.005"}'), 2, 'the 1 ms and the 5 ms calls');
  assert.equal(s.get('cc_tool_call_duration_seconds_bucket{le="0.01"}'), 3);
  assert.match(text, /^cc_test_up_inf \+Inf$/m);
  assert.match(text, /^cc_test_down_inf -Inf$/m);
  assert.match(text, /^# TYPE cc_test_grows_total counter$/m);
  assert.match(text, /^# TYPE cc_test_up_inf gauge$/m);
  assert.equal(s.get('cc_tool_calls_total{tool="a\\"b",outcome="c\\\\d"}'), 1);
  assert.equal(s.get('cc_link_frames_rejected_total{reason="x\\"y"}'), 1);
  assert.equal(s.get('cc_upstream_server_up{server="s",state="a\\nb"}'), 1);
  assert.ok(text.endsWith('cc_upstream_server_up{server="s",state="a\\nb"} 1\n'), JSON.stringify(text.slice(-60)));
});
