// Environment -> typed configuration. Every limit is explicit and validated before anything listens.
import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs';
import { splitTokens, tokenProblem } from './auth/tokens.js';
import { ConfigError, host, integer, optionalPath, origins, word, type Parse } from './config/values.js';
import { MiB, VARIABLES, accepted, isWhole, isWord, type LogLevel, type VariableSpec } from './config/variables.js';

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
  /** Most writes of the pins file for label changes alone: one per this many ms (CC_LINK_PIN_LABEL_WRITE_MS). */
  linkPinLabelWriteMs: number;
  /** A pins file write for computers' hellos alone (new pins) starts this long after the last ended at the soonest (CC_LINK_PIN_WRITE_MS). */
  linkPinWriteMs: number;
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
  /** Tool calls a second one client may start (MCP_CALL_RATE). */
  callRate: number;
  /** Tool calls one client may start at once (MCP_CALL_BURST). */
  callBurst: number;
  /** Most messages in one JSON-RPC batch (MCP_MAX_BATCH). */
  maxBatch: number;
  linkMaxBytesPerSecond: number;
  /** CC_LINK_MAX_UNSENT_BYTES */
  linkMaxUnsentBytes: number;
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
  /** Least ms between two tools/list of one upstream server on its list_changed (CC_UPSTREAM_RELIST_MS). */
  upstreamRelistMs: number;
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

function specOf(name: string): VariableSpec {
  const spec = VARIABLES.find((v) => v.name === name);
  /* c8 ignore next */
  if (!spec) throw new Error(`unknown variable ${name}`);
  return spec;
}

function read<T>(env: Record<string, string | undefined>, name: string, parse: Parse<T>): T {
  const spec = specOf(name);
  const raw = env[name];
  return parse(raw === undefined || raw === '' ? spec.default : raw, name);
}

/** A whole-number variable, checked against the min and max of its spec (what --help prints). */
function whole(env: Record<string, string | undefined>, name: string): number {
  const spec = specOf(name);
  /* c8 ignore next */
  if (!isWhole(spec)) throw new Error(`${name} has no min and max`);
  return read(env, name, integer(spec.min, spec.max));
}

/** A word variable, checked against the values of its spec (what --help prints). */
function choice(env: Record<string, string | undefined>, name: string): string {
  const spec = specOf(name);
  /* c8 ignore next */
  if (!isWord(spec)) throw new Error(`${name} has no values`);
  return read(env, name, word(spec.values, accepted(spec)));
}

/** Largest token file read (MCP_AUTH_TOKEN_FILE, CC_LINK_TOKEN_FILE): a few tokens of at most 256 characters. */
export const MAX_TOKEN_FILE_BYTES = 65536;

/**
 * A token file's text: only a regular file (a symlink to one is fine) of at most MAX_TOKEN_FILE_BYTES,
 * opened without blocking and checked on the open descriptor. Before, a FIFO there blocked the start
 * until something wrote to it, and /dev/zero was read until memory ran out.
 */
export function readTokenFile(path: string): string {
  const fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new Error('not a regular file: a FIFO, device or directory is never read');
    if (stat.size > MAX_TOKEN_FILE_BYTES) throw new Error(`${stat.size} bytes; a token file may be at most ${MAX_TOKEN_FILE_BYTES}`);
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
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
  readFile: (path: string) => string = readTokenFile,
): Config {
  const pin = choice(env, 'CC_LINK_PIN');
  const pinsFile = read(env, 'CC_LINK_PINS_FILE', optionalPath);
  if (pin === 'strict' && pinsFile === null) throw new ConfigError('CC_LINK_PIN', 'strict', 'strict needs CC_LINK_PINS_FILE (the pins it admits must outlive a restart)');
  if (pin === 'off' && pinsFile !== null) throw new ConfigError('CC_LINK_PINS_FILE', pinsFile, 'CC_LINK_PIN is off, so there are no pins to keep: unset one of them');
  return {
    mcpHost: read(env, 'MCP_HOST', host),
    mcpPort: whole(env, 'MCP_PORT'),
    linkHost: read(env, 'CC_LINK_HOST', host),
    linkPort: whole(env, 'CC_LINK_PORT'),
    probeTimeoutMs: whole(env, 'CC_PROBE_TIMEOUT_MS'),
    execTimeoutMs: whole(env, 'CC_EXEC_TIMEOUT_MS'),
    heartbeatMs: whole(env, 'CC_HEARTBEAT_MS'),
    linkRetryMs: whole(env, 'CC_LINK_RETRY_MS'),
    maxFrameBytes: whole(env, 'CC_MAX_FRAME_BYTES'),
    maxIdentityBytes: whole(env, 'CC_MAX_IDENTITY_BYTES'),
    listComputersMaxChars: whole(env, 'MCP_LIST_COMPUTERS_MAX_CHARS'),
    maxBodyBytes: whole(env, 'MCP_MAX_BODY_BYTES'),
    stdioHighWaterBytes: whole(env, 'MCP_STDIO_HIGH_WATER_BYTES'),
    stdioMaxQueuedBytes: whole(env, 'MCP_STDIO_MAX_QUEUED_BYTES'),
    stdioShutdownIdleMs: whole(env, 'MCP_STDIO_SHUTDOWN_IDLE_MS'),
    stdioShutdownMaxMs: whole(env, 'MCP_STDIO_SHUTDOWN_MAX_MS'),
    allowedOrigins: read(env, 'MCP_ALLOWED_ORIGINS', origins),
    linkAllowedOrigins: read(env, 'CC_LINK_ALLOWED_ORIGINS', origins),
    execLua: choice(env, 'CC_EXEC_LUA') === 'on',
    execMaxCodeBytes: whole(env, 'CC_EXEC_MAX_CODE_BYTES'),
    execMaxResultValues: whole(env, 'CC_EXEC_MAX_RESULT_VALUES'),
    logLevel: choice(env, 'LOG_LEVEL') as LogLevel,
    mcpAuthTokens: readTokens(env, 'MCP_AUTH_TOKEN', readFile),
    linkTokens: readTokens(env, 'CC_LINK_TOKEN', readFile),
    linkPin: pin !== 'off',
    linkPinStrict: pin === 'strict',
    linkPinsFile: pinsFile,
    sessionKeyFile: read(env, 'MCP_SESSION_KEY_FILE', optionalPath),
    linkEnrollMs: whole(env, 'CC_LINK_ENROLL_MS'),
    linkMaxPins: whole(env, 'CC_LINK_MAX_PINS'),
    linkPinConfirmMs: whole(env, 'CC_LINK_PIN_CONFIRM_MS'),
    linkPinLabelWriteMs: whole(env, 'CC_LINK_PIN_LABEL_WRITE_MS'),
    linkPinWriteMs: whole(env, 'CC_LINK_PIN_WRITE_MS'),
    allowUnauthenticated: choice(env, 'MCP_ALLOW_UNAUTHENTICATED') === 'on',
    configFile: read(env, 'CC_CONFIG', optionalPath),
    maxLinks: whole(env, 'CC_MAX_LINKS'),
    maxLinksPerAddress: whole(env, 'CC_MAX_LINKS_PER_ADDRESS'),
    maxPendingHellos: whole(env, 'CC_MAX_PENDING_HELLOS'),
    maxPendingHellosPerAddress: whole(env, 'CC_MAX_PENDING_HELLOS_PER_ADDRESS'),
    helloRate: whole(env, 'CC_HELLO_RATE'),
    maxRequestsPerComputer: whole(env, 'CC_MAX_REQUESTS_PER_COMPUTER'),
    maxConcurrentCalls: whole(env, 'MCP_MAX_CONCURRENT_CALLS'),
    callRate: whole(env, 'MCP_CALL_RATE'),
    callBurst: whole(env, 'MCP_CALL_BURST'),
    maxBatch: whole(env, 'MCP_MAX_BATCH'),
    linkMaxBytesPerSecond: whole(env, 'CC_LINK_MAX_BYTES_PER_S'),
    linkMaxUnsentBytes: whole(env, 'CC_LINK_MAX_UNSENT_BYTES'),
    linkYoungGenMaxBytes: whole(env, 'CC_LINK_YOUNG_GEN_MB') * MiB,
    upstreamTimeoutMs: whole(env, 'CC_UPSTREAM_TIMEOUT_MS'),
    upstreamMaxMessageBytes: whole(env, 'CC_UPSTREAM_MAX_MESSAGE_BYTES'),
    listTtlMs: whole(env, 'MCP_LIST_TTL_MS'),
    maxJsonDepth: whole(env, 'MCP_MAX_JSON_DEPTH'),
    patternMaxChars: whole(env, 'MCP_PATTERN_MAX_CHARS'),
    linkMaxJsonDepth: whole(env, 'CC_MAX_JSON_DEPTH'),
    maxFileBytes: whole(env, 'CC_MAX_FILE_BYTES'),
    sendStallMs: whole(env, 'MCP_SEND_STALL_MS'),
    upstreamMaxJsonDepth: whole(env, 'CC_UPSTREAM_MAX_JSON_DEPTH'),
    upstreamRelistMs: whole(env, 'CC_UPSTREAM_RELIST_MS'),
    maxSubscriptions: whole(env, 'MCP_MAX_SUBSCRIPTIONS'),
    maxSubscriptionsPerClient: whole(env, 'MCP_MAX_SUBSCRIPTIONS_PER_CLIENT'),
    listenKeepAliveMs: whole(env, 'MCP_LISTEN_KEEPALIVE_MS'),
    maxGetStreams: whole(env, 'MCP_MAX_GET_STREAMS'),
    maxGetStreamsPerSession: whole(env, 'MCP_MAX_GET_STREAMS_PER_SESSION'),
    maxGetStreamsPerClient: whole(env, 'MCP_MAX_GET_STREAMS_PER_CLIENT'),
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
    'Environment variables (the values taken in parentheses, the default in brackets):',
    ...VARIABLES.map((v) => {
      const values = accepted(v);
      return `  ${v.name.padEnd(width)}  ${v.meaning}${values === '' ? '' : ` (${values})`} [${v.default === '' ? 'empty' : v.default}]`;
    }),
  ];
  return lines.join('\n') + '\n';
}
