// Event streams held across the soak (scripts/soak.js, from its probe worker): GET /mcp streams of
// the 2025 revisions (one session each) and 2026-07-28 subscriptions/listen streams stay open the
// whole run while the tool set changes (CC_CONFIG rewritten, POST /reload) every few seconds, and a
// stream of each kind is opened and dropped with each change. At the end: did every held stream get
// one notice per change (and its keep-alives), and are the bridge's stream and subscription counts
// back to 0 once they are closed. Loopback only; bounded by the soak's own phases.
import http from 'node:http';
import { writeFileSync } from 'node:fs';
import { request, sleep } from './soak-lib.js';

const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
const SUB = 'io.modelcontextprotocol/subscriptionId';
const CHANGED = 'notifications/tools/list_changed';
const tool = (name) => ({ name, target: { computerId: 1 }, lua: 'return 7' });

/** Opens one event stream; resolves once its head arrived, with its events and comments as they come. */
function openStream(base, { method, headers, body }) {
  const url = new URL('/mcp', base);
  return new Promise((resolve) => {
    const req = http.request({ host: url.hostname, port: url.port, path: '/mcp', method, headers, agent: false });
    const s = { status: 0, events: [], comments: 0, ended: false, close: () => req.destroy() };
    req.on('error', () => {
      s.ended = true;
      resolve(s);
    });
    req.on('response', (res) => {
      s.status = res.statusCode;
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        buffer += chunk;
        let cut;
        while ((cut = buffer.indexOf('\n\n')) !== -1) {
          for (const line of buffer.slice(0, cut).split('\n')) {
            if (line.startsWith('data: ')) s.events.push(JSON.parse(line.slice(6)));
            else if (line.startsWith(':')) s.comments++;
          }
          buffer = buffer.slice(cut + 2);
        }
      });
      res.on('end', () => (s.ended = true));
      res.on('error', () => (s.ended = true));
      resolve(s);
    });
    req.end(body);
  });
}

export class HeldStreams {
  constructor({ base, auth, configFile }) {
    Object.assign(this, { base, auth, configFile });
    this.gets = [];
    this.listens = [];
    this.changes = 0;
    this.churned = { opened: 0, refused: 0 };
    this.sessions = 0;
  }

  async session() {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'soak', version: '0' } } });
    const res = await request(this.base, { headers: { ...this.auth, accept: 'application/json, text/event-stream' }, body });
    const id = res.headers?.['mcp-session-id'];
    if (!id) throw new Error(`initialize handed out no session: ${res.status} ${res.text?.slice(0, 200)}`);
    this.sessions++;
    return id;
  }

  openGet(session) {
    return openStream(this.base, { method: 'GET', headers: { ...this.auth, accept: 'text/event-stream', 'mcp-protocol-version': '2025-11-25', 'mcp-session-id': session } });
  }

  openListen(id) {
    return openStream(this.base, {
      method: 'POST',
      headers: { ...this.auth, accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'subscriptions/listen' },
      body: JSON.stringify({ jsonrpc: '2.0', id, method: 'subscriptions/listen', params: { _meta: META, notifications: { toolsListChanged: true } } }),
    });
  }

  /** Opens the held streams; throws unless every one is open (and every listen acknowledged). */
  async open({ gets, listens }) {
    this.gets = await Promise.all(Array.from({ length: gets }, async () => this.openGet(await this.session())));
    this.listens = await Promise.all(Array.from({ length: listens }, (_, k) => this.openListen(`held-${k}`)));
    for (const s of [...this.gets, ...this.listens]) if (s.status !== 200) throw new Error(`a held stream was refused: ${s.status}`);
    const t0 = Date.now();
    while (this.listens.some((s) => s.events.length === 0) && Date.now() - t0 < 10_000) await sleep(10);
  }

  /** One tool set change (a tool renamed in CC_CONFIG, then POST /reload), and a stream of each kind opened and dropped. */
  async change() {
    this.changes++;
    writeFileSync(this.configFile, JSON.stringify({ tools: [tool('soak-fixed'), tool(`soak-${this.changes}`)] }));
    const res = await request(this.base, { path: '/reload', headers: this.auth, body: '' });
    if (res.status !== 200) throw new Error(`reload: ${res.status} ${res.text?.slice(0, 200)}`);
    const dropped = await Promise.all([this.session().then((s) => this.openGet(s)), this.openListen(`churn-${this.changes}`)]);
    for (const s of dropped) {
      if (s.status === 200) this.churned.opened++;
      else this.churned.refused++;
      s.close();
    }
  }

  /** Notices each held stream got, the listens' with their own id only. */
  notices() {
    return {
      gets: this.gets.map((s) => s.events.filter((e) => e.method === CHANGED).length),
      listens: this.listens.map((s, k) => s.events.filter((e) => e.method === CHANGED && e.params?._meta?.[SUB] === `held-${k}`).length),
    };
  }

  /** Waits (up to 10 s) for the last change's notices, closes every held stream and reads the counts back. */
  async finish(metrics) {
    const all = () => Object.values(this.notices()).flat();
    const t0 = Date.now();
    while (all().some((n) => n < this.changes) && Date.now() - t0 < 10_000) await sleep(20);
    const got = this.notices();
    const endedEarly = [...this.gets, ...this.listens].filter((s) => s.ended).length;
    const keepAlives = [...this.gets, ...this.listens].reduce((n, s) => n + s.comments, 0);
    const during = await metrics();
    for (const s of [...this.gets, ...this.listens]) s.close();
    let after = await metrics();
    for (let i = 0; i < 100 && (after.cc_mcp_get_streams || after.cc_mcp_subscriptions); i++) {
      await sleep(50);
      after = await metrics();
    }
    return {
      changes: this.changes,
      held: { gets: this.gets.length, listens: this.listens.length, endedEarly },
      noticesPerHeldStream: got,
      missedNotices: all().reduce((n, c) => n + Math.max(0, this.changes - c), 0),
      extraNotices: all().reduce((n, c) => n + Math.max(0, c - this.changes), 0),
      keepAlives,
      openedAndDropped: this.churned,
      cutOff: { gets: during.cc_mcp_get_streams_cut_off_total, listens: during.cc_mcp_subscriptions_cut_off_total },
      openBeforeClose: { gets: during.cc_mcp_get_streams, subscriptions: during.cc_mcp_subscriptions },
      openAfterClose: { gets: after.cc_mcp_get_streams, subscriptions: after.cc_mcp_subscriptions },
    };
  }
}
