// Counters and gauges for GET /metrics, rendered in the Prometheus text format by hand. The hot
// path only adds to plain numbers or to a counter found by two Map lookups (no allocation once a
// tool/outcome pair has been seen); everything else is read when /metrics is scraped.

/** Upper bounds (seconds) of the call latency histogram buckets. */
export const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300] as const;

/** Counts by one label value. The label values must come from a bounded set (codes, tool names). */
export class Counter {
  readonly values = new Map<string, number>();

  inc(label: string, by = 1): void {
    this.values.set(label, (this.values.get(label) ?? 0) + by);
  }

  get(label: string): number {
    return this.values.get(label) ?? 0;
  }
}

export interface Gauge {
  name: string;
  help: string;
  read(): number;
  /** 'counter' for a count that only grows; gauge when absent. */
  type?: 'gauge' | 'counter';
}

export interface UpstreamState {
  server: string;
  /** e.g. connecting, ready, failed, stopped */
  state: string;
}

export class Metrics {
  linksLinked = 0;
  linksReplaced = 0;
  readonly linksRefused = new Counter();
  framesIn = 0;
  framesOut = 0;
  readonly framesRejected = new Counter();
  /** Times a link socket's reading was paused by CC_LINK_MAX_BYTES_PER_S. */
  linksThrottled = 0;
  /** Links dropped for not reading what was sent to them (CC_LINK_MAX_UNSENT_BYTES). */
  linksUnread = 0;
  httpUnauthorized = 0;
  callsInFlight = 0;
  /** tool -> outcome -> count */
  private readonly calls = new Map<string, Map<string, number>>();
  private readonly latencyCounts = new Array<number>(LATENCY_BUCKETS.length + 1).fill(0);
  /**
   * Summed in ms, shown in seconds; in a Float64Array, not a field: a field that starts as 0 (a small
   * integer) and then takes a double (a call's ms from Date.now is one) changes its object's shape once,
   * and V8 throws away the optimised code of everything that touches this object (the link frame
   * handlers count frames here), at the end of the first tool call (issue 16).
   */
  private readonly latencyMsSum = new Float64Array(1);  private latencyCount = 0;
  private readonly gauges: Gauge[] = [];
  /** Filled by whoever supervises upstream MCP servers; read at scrape time. */
  upstreamStates: () => readonly UpstreamState[] = () => [];

  /** A gauge read at scrape time (links, pending requests, timers ...). */
  addGauge(gauge: Gauge): void {
    this.gauges.push(gauge);
  }

  /** A tool call ended: `outcome` is ok or a failure code; `ms` its duration. */
  callEnded(tool: string, outcome: string, ms: number): void {
    let byOutcome = this.calls.get(tool);
    if (!byOutcome) this.calls.set(tool, (byOutcome = new Map()));
    byOutcome.set(outcome, (byOutcome.get(outcome) ?? 0) + 1);
    const seconds = ms / 1000;
    let i = 0;
    while (i < LATENCY_BUCKETS.length && seconds > (LATENCY_BUCKETS[i] as number)) i++;
    this.latencyCounts[i] = (this.latencyCounts[i] as number) + 1;
    this.latencyMsSum[0] = (this.latencyMsSum[0] as number) + ms;
    this.latencyCount++;
  }

  callCount(tool: string, outcome: string): number {
    return this.calls.get(tool)?.get(outcome) ?? 0;
  }

  /** The full exposition. */
  render(): string {
    const out: string[] = [];
    const metric = (name: string, type: string, help: string, samples: Array<[string, number]>) => {
      out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
      for (const [labels, value] of samples) out.push(`${name}${labels} ${formatValue(value)}`);
    };
    const byLabel = (label: string, counter: Counter): Array<[string, number]> =>
      [...counter.values].map(([value, n]) => [`{${label}="${escapeLabel(value)}"}`, n]);

    metric('cc_bridge_up', 'gauge', 'Always 1 while the bridge answers.', [['', 1]]);
    for (const g of this.gauges) metric(g.name, g.type ?? 'gauge', g.help, [['', g.read()]]);
    metric('cc_links_linked_total', 'counter', 'Hellos accepted.', [['', this.linksLinked]]);
    metric('cc_links_replaced_total', 'counter', 'Links replaced by a newer link for the same computer id.', [['', this.linksReplaced]]);
    metric('cc_links_refused_total', 'counter', 'Link attempts refused, by reason.', byLabel('reason', this.linksRefused));
    metric('cc_link_frames_in_total', 'counter', 'Frames received from computers.', [['', this.framesIn]]);
    metric('cc_link_frames_out_total', 'counter', 'Frames sent to computers.', [['', this.framesOut]]);
    metric('cc_link_frames_rejected_total', 'counter', 'Frames from computers dropped, by reason.', byLabel('reason', this.framesRejected));
    metric('cc_link_throttled_total', 'counter', 'Times a link was paused for sending more than CC_LINK_MAX_BYTES_PER_S.', [['', this.linksThrottled]]);
    metric('cc_link_unread_dropped_total', 'counter', 'Links dropped for leaving more than CC_LINK_MAX_UNSENT_BYTES unread.', [['', this.linksUnread]]);
    metric('cc_http_unauthorized_total', 'counter', 'HTTP requests answered 401.', [['', this.httpUnauthorized]]);
    metric('cc_tool_calls_in_flight', 'gauge', 'Tool calls running now.', [['', this.callsInFlight]]);
    const calls: Array<[string, number]> = [];
    for (const [tool, byOutcome] of this.calls) {
      for (const [outcome, n] of byOutcome) calls.push([`{tool="${escapeLabel(tool)}",outcome="${escapeLabel(outcome)}"}`, n]);
    }
    metric('cc_tool_calls_total', 'counter', 'Tool calls ended, by tool and outcome (ok or a failure code).', calls);
    const buckets: Array<[string, number]> = [];
    let cumulative = 0;
    LATENCY_BUCKETS.forEach((le, i) => {
      cumulative += this.latencyCounts[i] as number;
      buckets.push([`{le="${le}"}`, cumulative]);
    });
    buckets.push(['{le="+Inf"}', this.latencyCount]);
    out.push('# HELP cc_tool_call_duration_seconds Tool call latency.', '# TYPE cc_tool_call_duration_seconds histogram');
    for (const [labels, value] of buckets) out.push(`cc_tool_call_duration_seconds_bucket${labels} ${value}`);
    out.push(`cc_tool_call_duration_seconds_sum ${formatValue((this.latencyMsSum[0] as number) / 1000)}`, `cc_tool_call_duration_seconds_count ${this.latencyCount}`);
    metric(
      'cc_upstream_server_up',
      'gauge',
      'Upstream MCP servers, 1 for the state each is in.',
      this.upstreamStates().map((u) => [`{server="${escapeLabel(u.server)}",state="${escapeLabel(u.state)}"}`, 1]),
    );
    return out.join('\n') + '\n';
  }
}

/** What an unauthenticated scrape gets when MCP_AUTH_TOKEN is set: that the bridge is up, nothing more. */
export const PUBLIC_METRICS = '# HELP cc_bridge_up Always 1 while the bridge answers.\n# TYPE cc_bridge_up gauge\ncc_bridge_up 1\n';

export function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function formatValue(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Infinity) return '+Inf';
  if (n === -Infinity) return '-Inf';
  return String(n);
}
