// Wires the registry, the link listener and the MCP listener together. Used by the process entry,
// the tests and the benchmark alike.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Config } from './config.js';
import { LinkRegistry } from './link/registry.js';
import { startLinkServer } from './link/server.js';
import { holdLinkPort, type LinkListenerStatus, type LinkPortHolder } from './link/port-holder.js';
import { createLogger, type Logger } from './log.js';
import { builtinSource } from './tools/builtins.js';
import { ToolRegistry } from './tools/registry.js';
import { Dispatcher } from './mcp/dispatch.js';
import { startHttpServer } from './surfaces/http.js';
import { AnswerWriter } from './surfaces/respond.js';
import { EventStreams } from './surfaces/event-streams.js';
import { TokenSet } from './auth/tokens.js';
import { setupPins } from './link/pin-setup.js';
import { useSessionKey } from './surfaces/caller-scope.js';
import type { KeyPins } from './link/pins.js';
import { Metrics } from './metrics.js';
import { CallRate } from './tools/call-rate.js';
import { bridgeRoutes } from './surfaces/routes.js';
import type { ConfigHub } from './config/hub.js';
import type { EndpointAliases } from './surfaces/endpoints.js';

/** The computer program, joined from lua/mcp-computer/ into dist/ by npm run build (scripts/build-lua.js). */
export const LUA_PROGRAM_PATH = fileURLToPath(new URL('./mcp-computer.lua', import.meta.url));

let version: string | undefined;

/** package.json's version, read once (the banner, initialize's serverInfo, the upstream clients and /openapi.json show it). */
export function packageVersion(): string {
  version ??= (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  return version;
}

export interface Bridge {
  /** '' when the HTTP listener is off (--stdio without MCP_PORT). */
  mcpUrl: string;
  linkUrl: string;
  links: LinkRegistry;
  tools: ToolRegistry;
  dispatcher: Dispatcher;
  /** The CC_CONFIG file applied to the registry; null without CC_CONFIG. */
  hub: ConfigHub | null;
  /** REST aliases (the config file's `endpoints`): check() validates a list, apply() swaps it in. */
  endpoints: EndpointAliases;
  /** The pin table (CC_LINK_PIN); undefined when it is off. */
  pins: KeyPins | undefined;
  /** Counters behind GET /metrics; `metrics.upstreamStates` is the hook for upstream servers. */
  metrics: Metrics;
  /** The link listener: listening, or waiting for its port (BridgeOptions.linkRetryMs). */
  linkStatus(): LinkListenerStatus;
  /** Logs the link-port waiting warning held back by BridgeOptions.quietLinkWait (nothing otherwise). */
  announceLink(): void;
  /** Stop accepting, end links with 1001, let in-flight MCP calls answer; resolves when closed. */
  close(graceMs?: number): Promise<void>;
}

function urlHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

export interface BridgeOptions {
  /** Serve MCP, REST and /health over HTTP (default true; --stdio turns it off unless MCP_PORT is set). */
  http?: boolean;
  /**
   * When another process holds the link port: try it again this often and serve meanwhile with no
   * computers (--stdio: CC_LINK_RETRY_MS). 0 or absent: a taken port fails startup (HTTP mode).
   */
  linkRetryMs?: number;
  /** Hold the link-port waiting warning back until Bridge.announceLink() (after the process entry's banner). */
  quietLinkWait?: boolean;
}

export async function startBridge(config: Config, log: Logger = createLogger(config.logLevel), options: BridgeOptions = {}): Promise<Bridge> {
  const metrics = new Metrics();
  const links = new LinkRegistry();
  links.maxPendingPerLink = config.maxRequestsPerComputer;
  links.maxIdentityBytes = config.maxIdentityBytes;
  const tools = new ToolRegistry(config);
  tools.setSource(builtinSource);
  // one table for the bridge's lifetime, kept across a port takeover (startLinkServer again);
  // a bad CC_LINK_PINS_FILE throws PinsFileError here, before anything listens
  const pinning = await setupPins(config, log, metrics);
  const pins = pinning?.pins;
  // a bad MCP_SESSION_KEY_FILE throws SessionKeyFileError here, before anything listens; its module
  // loads only when the variable is set
  if (config.sessionKeyFile !== null) {
    const loaded = (await import('./surfaces/session-key.js')).loadSessionKey(config.sessionKeyFile);
    useSessionKey(loaded.key);
    log.info(`session ids signed with the key ${loaded.made ? 'made now in' : 'read from'} ${config.sessionKeyFile} (MCP_SESSION_KEY_FILE): they stay valid across restarts`);
  }
  // list-computers and GET /computers say whether each id is pinned (never the key or its hash)
  if (pins) {
    links.pinned = (computerId) => pins.has(computerId);
    // a pinned computer that is away keeps its label: another one saying it is not taken for it
    links.pinLabels = { seen: (computerId, label) => pins.noteLabel(computerId, label), holders: (label) => pins.idsLabelled(label) };
  }
  // a bad file throws ConfigFileError here, before anything listens
  // the hub and the upstream client code (about a third of the modules) load only with a config file:
  // a bare bridge starts faster without them
  const hub =
    config.configFile === null
      ? null
      : new (await import('./config/hub.js')).ConfigHub(config.configFile, tools, log, {
          timeoutMs: config.upstreamTimeoutMs,
          maxMessageBytes: config.upstreamMaxMessageBytes,
          maxJsonDepth: config.upstreamMaxJsonDepth,
          relistMs: config.upstreamRelistMs,
          version: packageVersion(),
        });
  if (hub) hub.apply(hub.read());
  // MCP_CALL_RATE: one limiter for every surface (MCP over HTTP and stdio, REST)
  const rate = new CallRate(config.callRate, config.callBurst);
  const dispatcher = new Dispatcher({ links, tools, config, log, serverVersion: packageVersion(), metrics, rate });
  let link: LinkPortHolder;
  try {
    let attempts = 0;
    link = await holdLinkPort(async () => {
      const first = attempts++ === 0;
      const server = await startLinkServer(links, log, {
        host: config.linkHost,
        port: config.linkPort,
        heartbeatMs: config.heartbeatMs,
        maxFrameBytes: config.maxFrameBytes,
        luaProgramPath: LUA_PROGRAM_PATH,
        allowedOrigins: config.linkAllowedOrigins,
        tokens: new TokenSet(config.linkTokens),
        pins,
        limits: {
          maxLinks: config.maxLinks,
          maxLinksPerAddress: config.maxLinksPerAddress,
          maxPendingHellos: config.maxPendingHellos,
          maxPendingHellosPerAddress: config.maxPendingHellosPerAddress,
          helloRate: config.helloRate,
        },
        metrics,
        maxBytesPerSecond: config.linkMaxBytesPerSecond,
        maxUnsentBytes: config.linkMaxUnsentBytes,
        youngGenMaxBytes: config.linkYoungGenMaxBytes,
        maxJsonDepth: config.linkMaxJsonDepth,
      });
      // taken over from another bridge (--stdio) that may share CC_LINK_PINS_FILE: its pins count now
      if (!first) pinning?.reread();
      return server;
    }, {
      host: config.linkHost,
      port: config.linkPort,
      retryMs: options.linkRetryMs ?? 0,
      log,
      onUnreachable: (reason) => void (links.unreachable = reason),
      quiet: options.quietLinkWait === true,
    });
  } catch (err) {
    await hub?.close();
    throw err;
  }
  if (hub) metrics.upstreamStates = () => hub.serverStatus().map((s) => ({ server: s.id, state: s.state }));
  metrics.addGauge({ name: 'cc_links', help: 'Computers linked now.', read: () => links.size });
  metrics.addGauge({ name: 'cc_link_listening', help: 'Whether the link listener holds its port (0: another process has it; --stdio waits for it, CC_LINK_RETRY_MS).', read: () => (link.server ? 1 : 0) });
  metrics.addGauge({ name: 'cc_mcp_calls_tracked', help: 'MCP tool calls tracked for notifications/cancelled (entries that must drain to 0).', read: () => dispatcher.activeCalls });
  metrics.addGauge({ name: 'cc_mcp_subscriptions', help: '2026-07-28 subscriptions/listen streams open now (MCP_MAX_SUBSCRIPTIONS).', read: () => dispatcher.subscriptions.size });
  metrics.addGauge({ name: 'cc_mcp_subscriptions_replaced_total', help: 'subscriptions/listen ended to make room for a newer one (MCP_MAX_SUBSCRIPTIONS_PER_CLIENT, MCP_MAX_SUBSCRIPTIONS).', read: () => dispatcher.subscriptions.replaced, type: 'counter' });
  metrics.addGauge({ name: 'cc_link_requests_pending', help: 'Requests sent to computers and not answered yet.', read: () => links.pendingCount() });
  const answers = new AnswerWriter(config.sendStallMs);
  metrics.addGauge({ name: 'cc_http_answers_writing', help: 'HTTP answers not yet taken whole by their client.', read: () => answers.writing.size });
  metrics.addGauge({ name: 'cc_http_answer_bytes_queued', help: 'Bytes of those answers waiting in socket buffers (about 64 KiB each at most).', read: () => answers.queuedBytes() });
  metrics.addGauge({ name: 'cc_http_answers_cut_off_total', help: 'Clients cut off for taking none of their answer for MCP_SEND_STALL_MS.', read: () => answers.cutOff, type: 'counter' });
  const streams = new EventStreams({ maxStreams: config.maxGetStreams, keepAliveMs: config.listenKeepAliveMs, stallMs: config.sendStallMs });
  metrics.addGauge({ name: 'cc_mcp_get_streams', help: 'GET /mcp event streams open now (at most MCP_MAX_GET_STREAMS).', read: () => streams.size });
  metrics.addGauge({ name: 'cc_mcp_get_streams_replaced_total', help: 'GET /mcp event streams ended to make room for a newer one (MCP_MAX_GET_STREAMS_PER_SESSION, MCP_MAX_GET_STREAMS).', read: () => streams.replaced, type: 'counter' });
  metrics.addGauge({ name: 'cc_mcp_get_streams_cut_off_total', help: 'Event streams cut off because their client took nothing of them for MCP_SEND_STALL_MS.', read: () => streams.cutOff, type: 'counter' });
  // subscriptions/listen answers: the same keep-alive and cut-offs; the limit is the subscriptions'
  const listenStreams = new EventStreams({ maxStreams: config.maxSubscriptions, keepAliveMs: config.listenKeepAliveMs, stallMs: config.sendStallMs });
  metrics.addGauge({ name: 'cc_mcp_subscriptions_cut_off_total', help: 'subscriptions/listen streams cut off because their client took nothing of them (MCP_SEND_STALL_MS, 64 KiB).', read: () => listenStreams.cutOff, type: 'counter' });
  let mcp;
  let endpoints: EndpointAliases;
  try {
    const routes = bridgeRoutes({
      dispatcher,
      log,
      maxBodyBytes: config.maxBodyBytes,
      computers: () => links.size,
      linkStatus: () => link.status(),
      tools,
      links,
      config,
      version: packageVersion(),
      metrics,
      rate,
      hub,
      pins,
      // MCP_MAX_GET_STREAMS=0: no GET stream (405) and initialize does not declare listChanged over HTTP
      ...(config.maxGetStreams > 0 ? { streams } : {}),
      listenStreams,
    });
    endpoints = routes.endpoints;
    // the file's REST aliases; a path taken by a built-in route is a config error (ConfigFileError)
    hub?.attachEndpoints(endpoints);
    mcp = options.http === false ? null : await startHttpServer(routes.router, log, {
      host: config.mcpHost,
      port: config.mcpPort,
      allowedOrigins: config.allowedOrigins,
      auth: new TokenSet(config.mcpAuthTokens),
      metrics,
      answers,
    });
  } catch (err) {
    await Promise.all([link.close(), hub?.close()]);
    throw err;
  }
  let closing: Promise<void> | null = null;
  return {
    mcpUrl: mcp ? `http://${urlHost(config.mcpHost)}:${mcp.address.port}/mcp` : '',
    linkUrl: `ws://${urlHost(config.linkHost)}:${link.server?.address.port ?? config.linkPort}`,
    links,
    tools,
    dispatcher,
    hub,
    endpoints,
    pins,
    metrics,
    linkStatus: () => link.status(),
    announceLink: () => link.announce(),
    close(graceMs = 4000) {
      // each open subscriptions/listen is answered (a graceful end) before its stream closes
      if (!closing) dispatcher.subscriptions.completeAll();
      // event streams never end by themselves: ended first, so the listener can close
      streams.close();
      listenStreams.close();
      // the last pins are written before the process may exit
      closing ??= Promise.all([mcp?.close(graceMs), link.close(), hub?.close()]).then(() => pinning?.writer?.flush());
      return closing;
    },
  };
}
