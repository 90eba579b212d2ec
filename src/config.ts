// Environment -> typed configuration. Every limit is explicit and validated before anything listens.
import { readFileSync } from 'node:fs';
import { splitTokens, tokenProblem } from './auth/tokens.js';
import { ConfigError, bytes, count, duration, host, integer, level, onOff, optionalPath, origins, pinMode, port, type Parse } from './config/values.js';
import { MiB, VARIABLES, type LogLevel } from './config/variables.js';

export { ConfigError } from './config/values.js';
export { LOG_LEVELS, VARIABLES, type LogLevel } from './config/variables.js';

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
  /** Most bytes of JSON kept of one computer's identity (hello, info frames); more is cut (CC_MAX_IDENTITY_BYTES). */
  maxIdentityBytes: number;
  /** Most characters of JSON in a list-computers answer or GET /computers body; past it computers lose their lists, then their entries (MCP_LIST_COMPUTERS_MAX_CHARS). */
  listComputersMaxChars: number;
  maxBodyBytes: number;
  /** --stdio: more than this waiting unread in stdout stops the reading of stdin until it drains (MCP_STDIO_HIGH_WATER_BYTES). */
  stdioHighWaterBytes: number;
  /** --stdio: past this unread in stdout, answers are replaced by a short error (MCP_STDIO_MAX_QUEUED_BYTES; never below the mark). */
  stdioMaxQueuedBytes: number;
  /** --stdio shutdown: exit once the host has taken no byte of stdout for this long (MCP_STDIO_SHUTDOWN_IDLE_MS). */
  stdioShutdownIdleMs: number;
  /** --stdio shutdown: the longest it takes in all (MCP_STDIO_SHUTDOWN_MAX_MS). */
  stdioShutdownMaxMs: number;
  allowedOrigins: string[];
  /** CC_LINK_ALLOWED_ORIGINS: browser pages from these may link; any other Origin on the link port gets 403. */
  linkAllowedOrigins: string[];
  execLua: boolean;
  /** Largest exec-lua code argument, in bytes (CC_EXEC_MAX_CODE_BYTES). */
  execMaxCodeBytes: number;
  execMaxResultValues: number;
  logLevel: LogLevel;
  /** Bearer tokens accepted on the MCP port (several for rotation); empty: no MCP auth. */
  mcpAuthTokens: string[];
  /** Tokens a computer's hello may carry; empty: no link auth. */
  linkTokens: string[];
  /** Pin each computer id to the key it first links with (CC_LINK_PIN on or strict). */
  linkPin: boolean;
  /** CC_LINK_PIN=strict: only pinned (or operator-opened) computer ids link. */
  linkPinStrict: boolean;
  /** CC_LINK_PINS_FILE: where the pins are kept across restarts; null: in memory only. */
  linkPinsFile: string | null;
  /** MCP_SESSION_KEY_FILE: where the session-id signing key is kept across restarts; null: a new key each start. */
  sessionKeyFile: string | null;
  /** How long an id reset under CC_LINK_PIN=strict waits for its computer's keyed hello (CC_LINK_ENROLL_MS). */
  linkEnrollMs: number;
  /** Most computer ids pinned at once (CC_LINK_MAX_PINS). */
  linkMaxPins: number;
  /** How long a new pin's links must stay up in all before it is confirmed, no longer evictable (CC_LINK_PIN_CONFIRM_MS). */
  linkPinConfirmMs: number;
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
  /** MCP_MAX_GET_STREAMS_PER_CLIENT: most GET /mcp streams one client (its token, else its address) holds over all its sessions. */
  maxGetStreamsPerClient: number;
}

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
  // a value of separators only (`,` or spaces) would otherwise turn the check off without a word
  if (path === '' && inline !== '' && tokens.length === 0) throw new ConfigError(name, '<hidden>', 'holds no token, only separators (commas or whitespace); unset it to run without tokens');
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
  const pin = read(env, 'CC_LINK_PIN', pinMode);
  const pinsFile = read(env, 'CC_LINK_PINS_FILE', optionalPath);
  if (pin === 'strict' && pinsFile === null) throw new ConfigError('CC_LINK_PIN', 'strict', 'strict needs CC_LINK_PINS_FILE (the pins it admits must outlive a restart)');
  if (pin === 'off' && pinsFile !== null) throw new ConfigError('CC_LINK_PINS_FILE', pinsFile, 'CC_LINK_PIN is off, so there are no pins to keep: unset one of them');
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
    maxIdentityBytes: read(env, 'CC_MAX_IDENTITY_BYTES', integer(4096, 64 * MiB)),
    listComputersMaxChars: read(env, 'MCP_LIST_COMPUTERS_MAX_CHARS', integer(65536, 256 * MiB)),
    maxBodyBytes: read(env, 'MCP_MAX_BODY_BYTES', bytes),
    stdioHighWaterBytes: read(env, 'MCP_STDIO_HIGH_WATER_BYTES', bytes),
    stdioMaxQueuedBytes: read(env, 'MCP_STDIO_MAX_QUEUED_BYTES', integer(MiB, 4096 * MiB)),
    stdioShutdownIdleMs: read(env, 'MCP_STDIO_SHUTDOWN_IDLE_MS', integer(100, 3_600_000)),
    stdioShutdownMaxMs: read(env, 'MCP_STDIO_SHUTDOWN_MAX_MS', integer(1000, 86_400_000)),
    allowedOrigins: read(env, 'MCP_ALLOWED_ORIGINS', origins),
    linkAllowedOrigins: read(env, 'CC_LINK_ALLOWED_ORIGINS', origins),
    execLua: read(env, 'CC_EXEC_LUA', onOff),
    execMaxCodeBytes: read(env, 'CC_EXEC_MAX_CODE_BYTES', integer(1024, MiB)),
    execMaxResultValues: read(env, 'CC_EXEC_MAX_RESULT_VALUES', integer(1000, 10_000_000)),
    logLevel: read(env, 'LOG_LEVEL', level),
    mcpAuthTokens: readTokens(env, 'MCP_AUTH_TOKEN', readFile),
    linkTokens: readTokens(env, 'CC_LINK_TOKEN', readFile),
    linkPin: pin !== 'off',
    linkPinStrict: pin === 'strict',
    linkPinsFile: pinsFile,
    sessionKeyFile: read(env, 'MCP_SESSION_KEY_FILE', optionalPath),
    linkEnrollMs: read(env, 'CC_LINK_ENROLL_MS', integer(1000, 86_400_000)),
    linkMaxPins: read(env, 'CC_LINK_MAX_PINS', count),
    linkPinConfirmMs: read(env, 'CC_LINK_PIN_CONFIRM_MS', integer(1000, 86_400_000)),
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
    maxGetStreamsPerClient: read(env, 'MCP_MAX_GET_STREAMS_PER_CLIENT', count),
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
