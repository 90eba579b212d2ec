// Environment -> typed configuration. Every limit is explicit and validated before anything listens.
import { readFileSync } from 'node:fs';
import { splitTokens, tokenProblem } from './auth/tokens.js';

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface Config {
  mcpHost: string;
  mcpPort: number;
  linkHost: string;
  linkPort: number;
  probeTimeoutMs: number;
  execTimeoutMs: number;
  heartbeatMs: number;
  /** --stdio: how often a taken link port is tried again (CC_LINK_RETRY_MS); 0: exit 1 instead. */
  linkRetryMs: number;
  maxFrameBytes: number;
  maxBodyBytes: number;
  allowedOrigins: string[];
  execLua: boolean;
  /** Largest exec-lua code argument, in bytes (CC_EXEC_MAX_CODE_BYTES). */
  execMaxCodeBytes: number;
  execMaxResultValues: number;
  logLevel: LogLevel;
  /** Bearer tokens accepted on the MCP port (several for rotation); empty: no MCP auth. */
  mcpAuthTokens: string[];
  /** Tokens a computer's hello may carry; empty: no link auth. */
  linkTokens: string[];
  /** Pin each computer id to the key it first links with (CC_LINK_PIN). */
  linkPin: boolean;
  /** Most computer ids pinned at once (CC_LINK_MAX_PINS). */
  linkMaxPins: number;
  /** Let MCP listen on a non-loopback address without a token. */
  allowUnauthenticated: boolean;
  /** CC_CONFIG: the JSON file with config-defined tools and upstream servers; null without one. */
  configFile: string | null;
  maxLinks: number;
  maxLinksPerAddress: number;
  maxPendingHellos: number;
  maxPendingHellosPerAddress: number;
  helloRate: number;
  maxRequestsPerComputer: number;
  maxConcurrentCalls: number;
  /** Most messages in one JSON-RPC batch (MCP_MAX_BATCH). */
  maxBatch: number;
  linkMaxBytesPerSecond: number;
  /** CC_LINK_YOUNG_GEN_MB in bytes: the young generation's bound while computers link; 0: none. */
  linkYoungGenMaxBytes: number;
  /** Default timeout of each request to an upstream MCP server (a server's timeoutMs overrides it). */
  upstreamTimeoutMs: number;
  /** Largest message an upstream server may send (a stdio line, an HTTP answer or SSE event). */
  upstreamMaxMessageBytes: number;
  /** ttlMs on cacheable 2026-07-28 results (server/discover, tools/list) (MCP_LIST_TTL_MS). */
  listTtlMs: number;
  /** Deepest nesting of a client's JSON body (MCP_MAX_JSON_DEPTH). */
  maxJsonDepth: number;
  /** Longest string (or key) a schema `pattern` is run on (MCP_PATTERN_MAX_CHARS). */
  patternMaxChars: number;
  /** Deepest nesting of a computer's frame (CC_MAX_JSON_DEPTH). */
  linkMaxJsonDepth: number;
  /** Deepest nesting of a message from an upstream MCP server (CC_UPSTREAM_MAX_JSON_DEPTH). */
  upstreamMaxJsonDepth: number;
  /** Largest file read-file / write-file move (CC_MAX_FILE_BYTES). */
  maxFileBytes: number;
  /** A client that takes none of its answer for this long is cut off (MCP_SEND_STALL_MS). */
  sendStallMs: number;
  /** Most 2026-07-28 subscriptions/listen streams open at once, stdio and HTTP together (MCP_MAX_SUBSCRIPTIONS). */
  maxSubscriptions: number;
  /** Most of them one client holds (its auth token, its stdio connection); one more ends its oldest (MCP_MAX_SUBSCRIPTIONS_PER_CLIENT). */
  maxSubscriptionsPerClient: number;
  /** An SSE comment on every open HTTP event stream (listen, GET /mcp) this often; 0: none (MCP_LISTEN_KEEPALIVE_MS). */
  listenKeepAliveMs: number;
  /** Most GET /mcp event streams open at once; 0: no GET stream (MCP_MAX_GET_STREAMS). */
  maxGetStreams: number;
  /** Most GET /mcp event streams of one session; one more ends its oldest (MCP_MAX_GET_STREAMS_PER_SESSION). */
  maxGetStreamsPerSession: number;
}

export class ConfigError extends Error {
  readonly code = 'ERR_CONFIG';
  constructor(readonly variable: string, readonly value: string, reason: string) {
    super(`${variable}=${JSON.stringify(value)}: ${reason}`);
    this.name = 'ConfigError';
  }
}

type Parse<T> = (raw: string, name: string) => T;

interface VariableSpec {
  name: string;
  default: string;
  meaning: string;
}

const MiB = 1024 * 1024;

export const VARIABLES: readonly VariableSpec[] = [
  { name: 'MCP_HOST', default: '127.0.0.1', meaning: 'address the MCP HTTP endpoint listens on' },
  { name: 'MCP_PORT', default: '3000', meaning: 'port of the MCP HTTP endpoint (0 picks a free port)' },
  { name: 'CC_LINK_HOST', default: '0.0.0.0', meaning: 'address the computer link (WebSocket) listens on' },
  { name: 'CC_LINK_PORT', default: '3001', meaning: 'port computers dial with http.websocket (0 picks a free port)' },
  { name: 'CC_LINK_RETRY_MS', default: '500', meaning: '--stdio only: when another process holds CC_LINK_PORT, serve MCP with no computers and try the port again this often, taking it over once free (0: exit 1 as HTTP mode does)' },
  { name: 'CC_PROBE_TIMEOUT_MS', default: '2000', meaning: 'how long probe-computers waits for pongs' },
  { name: 'CC_EXEC_TIMEOUT_MS', default: '10000', meaning: 'default exec-lua timeout (a call may ask for up to 300000)' },
  { name: 'CC_HEARTBEAT_MS', default: '30000', meaning: 'WebSocket ping interval; a link that missed a pong is dropped' },
  { name: 'CC_MAX_FRAME_BYTES', default: String(MiB), meaning: 'largest frame a computer may send; told to it in hello-ok, mcp-computer fits its frames to it; larger closes the link (1009)' },
  { name: 'MCP_MAX_BODY_BYTES', default: String(MiB), meaning: 'largest MCP request body; larger gets 413' },
  { name: 'MCP_ALLOWED_ORIGINS', default: '', meaning: 'comma-separated extra Origins allowed besides loopback ones' },
  { name: 'CC_EXEC_LUA', default: 'on', meaning: 'on|off: offer the exec-lua tool' },
  { name: 'CC_EXEC_MAX_CODE_BYTES', default: '65536', meaning: 'largest exec-lua code argument in bytes (at most 1048576); larger fails before anything is sent' },
  { name: 'CC_EXEC_MAX_RESULT_VALUES', default: '100000', meaning: 'most JSON values in the returned values of one exec-lua, Lua tool, run-program, call-peripheral or job result (1000 to 10000000); more fails that call as a malformed answer' },
  { name: 'LOG_LEVEL', default: 'info', meaning: `one of ${LOG_LEVELS.join(', ')}` },
  { name: 'MCP_AUTH_TOKEN', default: '', meaning: 'bearer token(s) every MCP/REST request must carry (comma-separated for rotation)' },
  { name: 'MCP_AUTH_TOKEN_FILE', default: '', meaning: 'file holding the MCP token(s), one per line (keeps them out of the process list)' },
  { name: 'CC_LINK_TOKEN', default: '', meaning: 'token(s) a computer must send in its hello (comma-separated for rotation)' },
  { name: 'CC_LINK_TOKEN_FILE', default: '', meaning: 'file holding the link token(s), one per line' },
  { name: 'CC_LINK_PIN', default: 'on', meaning: 'on|off: the first hello for a computer id that carries a key (mcp-computer\'s mcp.key) pins the id to that key until the bridge restarts; a later hello for it with another key or none gets hello-error key_mismatch (restart the bridge to forget every pin)' },
  { name: 'CC_LINK_MAX_PINS', default: '10000', meaning: 'most computer ids pinned at once (about 100 bytes each); a keyed hello for a new id after that links unpinned, with a warning' },
  { name: 'CC_MAX_LINKS', default: '1000', meaning: 'most computers linked at once; more get hello-error busy' },
  { name: 'CC_MAX_LINKS_PER_ADDRESS', default: '1000', meaning: 'most links from one IP address (a Minecraft server\'s computers share its address)' },
  { name: 'CC_MAX_PENDING_HELLOS', default: '256', meaning: 'most link sockets that have not said hello yet; more get HTTP 503' },
  { name: 'CC_MAX_PENDING_HELLOS_PER_ADDRESS', default: '64', meaning: 'most such sockets from one IP address' },
  { name: 'CC_HELLO_RATE', default: '50', meaning: 'hellos per second accepted from one IP address (bursts of twice that); more get hello-error busy' },
  { name: 'CC_MAX_REQUESTS_PER_COMPUTER', default: '256', meaning: 'most requests in flight to one computer; more fail at once' },
  { name: 'CC_LINK_YOUNG_GEN_MB', default: '8', meaning: 'while computers link (until 250 ms after the last handshake), V8\'s young generation grows to at most this many MiB (0: as V8 decides, up to 32; V8 takes 2 whatever the bound)' },
  { name: 'CC_LINK_MAX_BYTES_PER_S', default: String(MiB), meaning: 'frame bytes one link socket may send a second (frames count at least 256); more pauses its reading until the second is over' },
  { name: 'CC_MAX_FILE_BYTES', default: String(16 * MiB), meaning: 'largest file read-file and write-file move (in pieces that fit the frame limit); larger is refused' },
  { name: 'MCP_MAX_BATCH', default: '100', meaning: 'most messages in one JSON-RPC batch (2025-03-26 clients); more get 400' },
  { name: 'MCP_MAX_CONCURRENT_CALLS', default: '1024', meaning: 'most tool calls running at once; more get HTTP 503 with Retry-After' },
  { name: 'MCP_ALLOW_UNAUTHENTICATED', default: 'off', meaning: 'on: allow MCP on a non-loopback address without MCP_AUTH_TOKEN' },
  { name: 'CC_CONFIG', default: '', meaning: 'path of a JSON file with config-defined Lua tools and upstream MCP servers' },
  { name: 'CC_UPSTREAM_TIMEOUT_MS', default: '60000', meaning: 'default timeout of each request to an upstream MCP server' },
  { name: 'MCP_LIST_TTL_MS', default: '0', meaning: 'ttlMs on 2026-07-28 server/discover and tools/list results: how long clients may cache them (0: refetch when needed)' },
  { name: 'MCP_MAX_JSON_DEPTH', default: '64', meaning: 'deepest nesting of arrays/objects in an MCP or REST body; deeper gets a 400 error' },
  { name: 'MCP_PATTERN_MAX_CHARS', default: '1000', meaning: 'longest argument a tool schema\'s "pattern" (or a patternProperties key) is run on; a longer one fails the call, so a regex cannot stall the bridge on a huge string' },
  { name: 'CC_MAX_JSON_DEPTH', default: '64', meaning: 'deepest nesting in a computer\'s frame; deeper is dropped (a response fails its request)' },
  { name: 'MCP_SEND_STALL_MS', default: '30000', meaning: 'a client that takes none of its answer (written 64 KiB at a time) for this long is cut off and the answer freed' },
  { name: 'MCP_MAX_SUBSCRIPTIONS', default: '256', meaning: 'most 2026-07-28 subscriptions/listen streams open at once (stdio and HTTP together); one more gets JSON-RPC error -32003 (HTTP 503), unless a client holding 2 more than the newcomer\'s would gives up its oldest' },
  { name: 'MCP_MAX_SUBSCRIPTIONS_PER_CLIENT', default: '32', meaning: 'most 2026-07-28 subscriptions/listen one client holds (a client: its MCP_AUTH_TOKEN, or the stdio connection; HTTP without tokens has no client the bridge can name); one more ends its oldest, answered with -32003' },
  { name: 'MCP_LISTEN_KEEPALIVE_MS', default: '15000', meaning: 'every open HTTP event stream (subscriptions/listen, GET /mcp) gets an SSE comment line this often, so proxies and clients with idle timeouts keep it open (0: never)' },
  { name: 'CC_UPSTREAM_MAX_JSON_DEPTH', default: '64', meaning: 'deepest nesting in a message from an upstream MCP server; deeper fails the call it answers (or is dropped)' },
  { name: 'MCP_MAX_GET_STREAMS', default: '256', meaning: 'most GET /mcp event streams (the 2025 revisions\' change notices) open at once; more get HTTP 503 (0: no GET stream, it answers 405, and initialize over HTTP does not declare tools.listChanged). At the limit a new stream first ends a spare: its own session\'s oldest, else the oldest of the session holding the most streams when that is 2 or more' },
  { name: 'MCP_MAX_GET_STREAMS_PER_SESSION', default: '4', meaning: 'most GET /mcp event streams one session (Mcp-Session-Id) holds; one more ends the session\'s oldest stream (notices go to its newest only), so a reconnecting client is never refused for its own dead streams' },
  { name: 'CC_UPSTREAM_MAX_MESSAGE_BYTES', default: String(4 * MiB), meaning: 'largest message an upstream MCP server may send; larger is dropped' },
];

const integer =
  (min: number, max: number): Parse<number> =>
  (raw, name) => {
    if (!/^\d+$/.test(raw.trim())) throw new ConfigError(name, raw, `expected a whole number from ${min} to ${max}`);
    const n = Number(raw.trim());
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      throw new ConfigError(name, raw, `expected a whole number from ${min} to ${max}`);
    }
    return n;
  };

const host: Parse<string> = (raw, name) => {
  // an IPv6 address may be written the way URLs write it: [::1]
  const value = raw.trim().replace(/^\[(.*)\]$/, '$1');
  if (value === '' || /[\s/[\]]/.test(value)) throw new ConfigError(name, raw, 'expected a host name or IP address');
  return value;
};

const origins: Parse<string[]> = (raw, name) => {
  const list = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  return list.map((origin) => {
    let url: URL | null = null;
    try {
      url = new URL(origin);
    } catch {
      // reported below
    }
    // an origin is scheme://host[:port] and nothing else; stored the way browsers send it
    if (
      !url ||
      (url.protocol !== 'http:' && url.protocol !== 'https:') ||
      url.username !== '' ||
      url.password !== '' ||
      url.pathname !== '/' ||
      url.search !== '' ||
      url.hash !== '' ||
      /[?#]/.test(origin)
    ) {
      throw new ConfigError(name, raw, `"${origin}" is not an origin such as https://example.com`);
    }
    return url.origin;
  });
};

const onOff: Parse<boolean> = (raw, name) => {
  const value = raw.trim().toLowerCase();
  if (['on', 'true', '1', 'yes'].includes(value)) return true;
  if (['off', 'false', '0', 'no'].includes(value)) return false;
  throw new ConfigError(name, raw, 'expected on or off');
};

const level: Parse<LogLevel> = (raw, name) => {
  const value = raw.trim().toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(value)) {
    throw new ConfigError(name, raw, `expected one of ${LOG_LEVELS.join(', ')}`);
  }
  return value as LogLevel;
};

const optionalPath: Parse<string | null> = (raw) => (raw.trim() === '' ? null : raw);

const port = integer(0, 65535);
const duration = integer(1, 3_600_000);
const bytes = integer(1024, 1024 * MiB);
const count = integer(1, 1_000_000);

function read<T>(env: Record<string, string | undefined>, name: string, parse: Parse<T>): T {
  const spec = VARIABLES.find((v) => v.name === name);
  /* c8 ignore next */
  if (!spec) throw new Error(`unknown variable ${name}`);
  const raw = env[name];
  return parse(raw === undefined || raw === '' ? spec.default : raw, name);
}

/** Tokens from `name` or from the file named by `${name}_FILE` (not both); [] when neither is set. */
function readTokens(env: Record<string, string | undefined>, name: string, readFile: (path: string) => string): string[] {
  const fileName = `${name}_FILE`;
  const inline = read(env, name, (raw) => raw);
  const path = read(env, fileName, (raw) => raw.trim());
  if (inline !== '' && path !== '') throw new ConfigError(fileName, path, `set either ${name} or ${fileName}, not both`);
  let text = inline;
  let source = name;
  if (path !== '') {
    source = fileName;
    try {
      text = readFile(path);
    } catch (err) {
      throw new ConfigError(fileName, path, `cannot read the file (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
  }
  const tokens = splitTokens(text);
  if (path !== '' && tokens.length === 0) throw new ConfigError(fileName, path, 'the file holds no token');
  for (const token of tokens) {
    const problem = tokenProblem(token);
    // never echo a secret: name the source and the reason only
    if (problem) throw new ConfigError(source, source === name ? '<hidden>' : path, problem);
  }
  return tokens;
}

export function loadConfig(
  env: Record<string, string | undefined> = process.env,
  readFile: (path: string) => string = (path) => readFileSync(path, 'utf8'),
): Config {
  return {
    mcpHost: read(env, 'MCP_HOST', host),
    mcpPort: read(env, 'MCP_PORT', port),
    linkHost: read(env, 'CC_LINK_HOST', host),
    linkPort: read(env, 'CC_LINK_PORT', port),
    probeTimeoutMs: read(env, 'CC_PROBE_TIMEOUT_MS', duration),
    execTimeoutMs: read(env, 'CC_EXEC_TIMEOUT_MS', integer(1, 300_000)),
    heartbeatMs: read(env, 'CC_HEARTBEAT_MS', duration),
    linkRetryMs: read(env, 'CC_LINK_RETRY_MS', integer(0, 3_600_000)),
    maxFrameBytes: read(env, 'CC_MAX_FRAME_BYTES', bytes),
    maxBodyBytes: read(env, 'MCP_MAX_BODY_BYTES', bytes),
    allowedOrigins: read(env, 'MCP_ALLOWED_ORIGINS', origins),
    execLua: read(env, 'CC_EXEC_LUA', onOff),
    execMaxCodeBytes: read(env, 'CC_EXEC_MAX_CODE_BYTES', integer(1024, MiB)),
    execMaxResultValues: read(env, 'CC_EXEC_MAX_RESULT_VALUES', integer(1000, 10_000_000)),
    logLevel: read(env, 'LOG_LEVEL', level),
    mcpAuthTokens: readTokens(env, 'MCP_AUTH_TOKEN', readFile),
    linkTokens: readTokens(env, 'CC_LINK_TOKEN', readFile),
    linkPin: read(env, 'CC_LINK_PIN', onOff),
    linkMaxPins: read(env, 'CC_LINK_MAX_PINS', count),
    allowUnauthenticated: read(env, 'MCP_ALLOW_UNAUTHENTICATED', onOff),
    configFile: read(env, 'CC_CONFIG', optionalPath),
    maxLinks: read(env, 'CC_MAX_LINKS', count),
    maxLinksPerAddress: read(env, 'CC_MAX_LINKS_PER_ADDRESS', count),
    maxPendingHellos: read(env, 'CC_MAX_PENDING_HELLOS', count),
    maxPendingHellosPerAddress: read(env, 'CC_MAX_PENDING_HELLOS_PER_ADDRESS', count),
    helloRate: read(env, 'CC_HELLO_RATE', count),
    maxRequestsPerComputer: read(env, 'CC_MAX_REQUESTS_PER_COMPUTER', count),
    maxConcurrentCalls: read(env, 'MCP_MAX_CONCURRENT_CALLS', count),
    maxBatch: read(env, 'MCP_MAX_BATCH', count),
    linkMaxBytesPerSecond: read(env, 'CC_LINK_MAX_BYTES_PER_S', bytes),
    linkYoungGenMaxBytes: read(env, 'CC_LINK_YOUNG_GEN_MB', integer(0, 1024)) * MiB,
    upstreamTimeoutMs: read(env, 'CC_UPSTREAM_TIMEOUT_MS', duration),
    upstreamMaxMessageBytes: read(env, 'CC_UPSTREAM_MAX_MESSAGE_BYTES', bytes),
    listTtlMs: read(env, 'MCP_LIST_TTL_MS', integer(0, 86_400_000)),
    maxJsonDepth: read(env, 'MCP_MAX_JSON_DEPTH', integer(2, 1000)),
    patternMaxChars: read(env, 'MCP_PATTERN_MAX_CHARS', integer(1, 1_000_000)),
    linkMaxJsonDepth: read(env, 'CC_MAX_JSON_DEPTH', integer(8, 1000)),
    maxFileBytes: read(env, 'CC_MAX_FILE_BYTES', bytes),
    sendStallMs: read(env, 'MCP_SEND_STALL_MS', duration),
    upstreamMaxJsonDepth: read(env, 'CC_UPSTREAM_MAX_JSON_DEPTH', integer(8, 1000)),
    maxSubscriptions: read(env, 'MCP_MAX_SUBSCRIPTIONS', integer(1, 100_000)),
    maxSubscriptionsPerClient: read(env, 'MCP_MAX_SUBSCRIPTIONS_PER_CLIENT', integer(1, 100_000)),
    listenKeepAliveMs: read(env, 'MCP_LISTEN_KEEPALIVE_MS', integer(0, 3_600_000)),
    maxGetStreams: read(env, 'MCP_MAX_GET_STREAMS', integer(0, 1_000_000)),
    maxGetStreamsPerSession: read(env, 'MCP_MAX_GET_STREAMS_PER_SESSION', count),
  };
}

export function helpText(program: string): string {
  const width = Math.max(...VARIABLES.map((v) => v.name.length));
  const lines = [
    `Usage: ${program} [--stdio] [--help] [--version]`,
    '',
    'Bridge between MCP clients (HTTP JSON-RPC on MCP_HOST:MCP_PORT) and ComputerCraft',
    'computers running mcp-computer.lua (WebSocket on CC_LINK_HOST:CC_LINK_PORT).',
    '',
    '  --stdio  MCP over stdin/stdout, one JSON message per line (for hosts that spawn their',
    '           servers); logs stay on stderr; EOF on stdin shuts down. The HTTP listener is',
    '           off unless MCP_PORT is set; the link listener runs as usual, and while another',
    '           process holds its port MCP is served with no computers until it frees (CC_LINK_RETRY_MS).',
    '',
    'Environment variables (default in brackets):',
    ...VARIABLES.map((v) => `  ${v.name.padEnd(width)}  ${v.meaning} [${v.default === '' ? 'empty' : v.default}]`),
  ];
  return lines.join('\n') + '\n';
}
