// The environment variables the bridge reads: name, default, meaning and the values it takes (the one list
// --help, the README and loadConfig read: loadConfig checks a whole number against this min and max and a
// word against these values, so what --help prints is what is enforced). A new limit is one line here and
// one read in src/config.ts.

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const MiB = 1024 * 1024;

interface Common {
  name: string;
  default: string;
  /** What it does; never its range or values (--help prints those from the fields below). */
  meaning: string;
}
/** A whole number from min to max (both taken). */
export interface WholeSpec extends Common {
  min: number;
  max: number;
}
/** One of these words (any case; on and off also as true/1/yes and false/0/no). */
export interface WordSpec extends Common {
  values: readonly string[];
}
/** Free text: a host, a list of origins, a path, tokens (checked by its own parser). */
export type TextSpec = Common;
export type VariableSpec = WholeSpec | WordSpec | TextSpec;

export const isWhole = (spec: VariableSpec): spec is WholeSpec => 'min' in spec;
export const isWord = (spec: VariableSpec): spec is WordSpec => 'values' in spec;

/** The values a variable takes, as --help and error messages say them: "1 to 300000", "on, off or strict"; '' for free text. */
export function accepted(spec: VariableSpec): string {
  if (isWhole(spec)) return `${spec.min} to ${spec.max}`;
  if (isWord(spec)) return spec.values.length > 3 ? `one of ${spec.values.join(', ')}` : `${spec.values.slice(0, -1).join(', ')} or ${spec.values[spec.values.length - 1]}`;
  return '';
}

// ranges many variables share
const PORT = { min: 0, max: 65535 };
const DURATION = { min: 1, max: 3_600_000 };
const BYTES = { min: 1024, max: 1024 * MiB };
const COUNT = { min: 1, max: 1_000_000 };
const DAY_MS = { min: 1000, max: 86_400_000 };
const DEPTH = { min: 8, max: 1000 };
const ON_OFF = ['on', 'off'] as const;

export const VARIABLES: readonly VariableSpec[] = [
  { name: 'MCP_HOST', default: '127.0.0.1', meaning: 'address the MCP HTTP endpoint listens on' },
  { name: 'MCP_PORT', default: '3000', meaning: 'port of the MCP HTTP endpoint (0 picks a free port)', ...PORT },
  { name: 'CC_LINK_HOST', default: '0.0.0.0', meaning: 'address the computer link (WebSocket) listens on' },
  { name: 'CC_LINK_PORT', default: '3001', meaning: 'port computers dial with http.websocket (0 picks a free port)', ...PORT },
  { name: 'CC_LINK_RETRY_MS', default: '500', meaning: '--stdio only: when another process holds CC_LINK_PORT, serve MCP with no computers and try the port again this often, taking it over once free (0: exit 1 as HTTP mode does)', min: 0, max: 3_600_000 },
  { name: 'CC_PROBE_TIMEOUT_MS', default: '2000', meaning: 'how long probe-computers waits for pongs', ...DURATION },
  { name: 'CC_EXEC_TIMEOUT_MS', default: '10000', meaning: 'default exec-lua timeout (a call may ask for up to 300000)', min: 1, max: 300_000 },
  { name: 'CC_HEARTBEAT_MS', default: '30000', meaning: 'WebSocket ping interval; a link that missed a pong is dropped', ...DURATION },
  { name: 'CC_MAX_FRAME_BYTES', default: String(MiB), meaning: 'largest frame a computer may send; told to it in hello-ok, mcp-computer fits its frames to it; larger closes the link (1009)', ...BYTES },
  { name: 'CC_MAX_IDENTITY_BYTES', default: String(32 * 1024), meaning: 'most bytes of JSON the bridge keeps of one computer\'s identity (its hello and info frames: kind, _HOST, CC version, peripherals, jobs); told to it in hello-ok, mcp-computer fits its info frames and later hellos to it. A richer hello or info frame still links: the peripherals, then jobs, that do not fit are left out (whole, from the end; jobs keep up to an eighth; at most 1024 peripherals and 64 jobs are kept), counted in list-computers\' "omitted", with one warning per link. All identities together hold at most this times CC_MAX_LINKS', min: 4096, max: 64 * MiB },
  { name: 'MCP_LIST_COMPUTERS_MAX_CHARS', default: String(128 * MiB), meaning: 'most characters of JSON in a list-computers answer (its entries and text lines) or a GET /computers body (V8 strings stop at 2^29 characters). Computers are listed whole in id order while they fit, then without their peripherals and jobs (counted in "omitted"), then not at all; a note (GET /computers: the CC-Link-Note header) says which', min: 65536, max: 256 * MiB },
  { name: 'MCP_MAX_BODY_BYTES', default: String(MiB), meaning: 'largest MCP request body; larger gets 413', ...BYTES },
  { name: 'MCP_STDIO_HIGH_WATER_BYTES', default: String(MiB), meaning: '--stdio only: with more than this written to stdout and not yet read by the host, stdin is not read until stdout drains (answers of work under way are still written, tool list notices wait, one per target)', ...BYTES },
  { name: 'MCP_STDIO_MAX_QUEUED_BYTES', default: String(64 * MiB), meaning: '--stdio only: most bytes of stdout the host may leave unread (never less than MCP_STDIO_HIGH_WATER_BYTES counts): past it, the answer of a call that finishes (each of a batch) is replaced by a -32003 error for its id saying so; notifications are still written', min: MiB, max: 4096 * MiB },
  { name: 'MCP_STDIO_SHUTDOWN_IDLE_MS', default: '5000', meaning: '--stdio only: at the end of input or SIGINT/SIGTERM the bridge exits once the host has taken every answer, or once this long passes in which the host took no byte of stdout, counted again from each byte it takes (so a host still reading, however slowly, loses nothing); while lines read are still being run only time with answers waiting counts; after that it is also how long calls in flight at the end of input may take to finish (one still running then is answered -32003 and cancelled)', min: 100, max: 3_600_000 },
  { name: 'MCP_STDIO_SHUTDOWN_MAX_MS', default: '60000', meaning: '--stdio only: the longest a shutdown takes once nothing is left to run (at the end of input: every line read has been run; SIGINT/SIGTERM: at once), however slowly the host reads; answers it has not taken by then are lost', ...DAY_MS },
  { name: 'MCP_ALLOWED_ORIGINS', default: '', meaning: 'comma-separated extra Origins allowed besides loopback ones' },
  { name: 'CC_LINK_ALLOWED_ORIGINS', default: '', meaning: 'comma-separated web Origins whose pages may link as computers (a CC emulator in a browser); a link handshake from any other browser page (one with an Origin header: CC:Tweaked sends none) gets HTTP 403' },
  { name: 'CC_EXEC_LUA', default: 'on', meaning: 'offer the exec-lua tool', values: ON_OFF },
  { name: 'CC_EXEC_MAX_CODE_BYTES', default: '65536', meaning: 'largest exec-lua code argument in bytes; larger fails before anything is sent', min: 1024, max: MiB },
  { name: 'CC_EXEC_MAX_RESULT_VALUES', default: '100000', meaning: 'most JSON values in the returned values of one exec-lua, Lua tool, run-program, call-peripheral or job result; more fails that call as a malformed answer', min: 1000, max: 10_000_000 },
  { name: 'LOG_LEVEL', default: 'info', meaning: 'how much is logged (to stderr)', values: LOG_LEVELS },
  { name: 'MCP_AUTH_TOKEN', default: '', meaning: 'bearer token(s) every MCP/REST request must carry (comma-separated for rotation)' },
  { name: 'MCP_AUTH_TOKEN_FILE', default: '', meaning: 'file holding the MCP token(s), one per line (keeps them out of the process list)' },
  { name: 'CC_LINK_TOKEN', default: '', meaning: 'token(s) a computer must send in its hello (comma-separated for rotation)' },
  { name: 'CC_LINK_TOKEN_FILE', default: '', meaning: 'file holding the link token(s), one per line' },
  { name: 'CC_LINK_PIN', default: 'on', meaning: 'the first hello for a computer id that carries a key (mcp-computer\'s mcp.key) pins the id to that key; a later hello for it with another key or none gets hello-error key_mismatch (cc-mcp pin-reset <id>, or POST /pins/<id>/reset, forgets one pin and distrusts its key until another is pinned; --allow-old-key does not). strict: only pinned ids link, others get hello-error not_enrolled; cc-mcp pin-reset <id> lets one in for CC_LINK_ENROLL_MS (needs CC_LINK_PINS_FILE)', values: ['on', 'off', 'strict'] },
  { name: 'CC_LINK_PINS_FILE', default: '', meaning: 'file keeping the pins across restarts (one "<id> <SHA-256 of the key>" line each, never a key, and the label each pinned computer last said; written 0600, atomically, after each change); read at start, a bad file stops the start. Empty: pins live in memory until the bridge stops' },
  { name: 'CC_LINK_ENROLL_MS', default: '600000', meaning: 'with CC_LINK_PIN=strict: how long an id the operator let in (cc-mcp pin-reset <id>, POST /pins/<id>/reset) waits for its computer\'s first hello with a key', ...DAY_MS },
  { name: 'CC_LINK_MAX_PINS', default: '10000', meaning: 'most computer ids pinned at once (about 150 bytes of heap each, about 120 more plus the label while its computer\'s label is held; with CC_LINK_PIN=strict, ids let in count too); a keyed hello for a new id after that takes the place of the oldest unconfirmed pin whose computer is not linked (CC_LINK_PIN_CONFIRM_MS), else links unpinned, with a warning', ...COUNT },
  { name: 'CC_LINK_PIN_CONFIRM_MS', default: '600000', meaning: 'with CC_LINK_PIN=on: how long a new pin\'s links must have stayed up in all before it is confirmed; until then a full CC_LINK_MAX_PINS table evicts it first when its computer is not linked', ...DAY_MS },
  { name: 'CC_LINK_PIN_LABEL_WRITE_MS', default: '1000', meaning: 'with CC_LINK_PINS_FILE: label changes of pinned computers alone rewrite the pins file at most once per this many ms (the latest labels each time, a pending write made at shutdown; a write for pin changes holds the labels too)', min: 100, max: 3_600_000 },
  { name: 'CC_LINK_PIN_WRITE_MS', default: '200', meaning: 'with CC_LINK_PINS_FILE: a rewrite of the pins file for the pins computers\' hellos made (new pins) starts at least this many ms after the last write ended, holding every pin made meanwhile; each such hello gets hello-ok once the write holding its pin is done (the operator\'s pin resets are written at once). 0: each write starts as soon as the last ended', min: 0, max: 2000 },
  { name: 'CC_MAX_LINKS', default: '1000', meaning: 'most computers linked at once; more get hello-error busy', ...COUNT },
  { name: 'CC_MAX_LINKS_PER_ADDRESS', default: '1000', meaning: 'most links from one IP address (a Minecraft server\'s computers share its address)', ...COUNT },
  { name: 'CC_MAX_PENDING_HELLOS', default: '256', meaning: 'most link sockets that have not said hello yet; more get HTTP 503', ...COUNT },
  { name: 'CC_MAX_PENDING_HELLOS_PER_ADDRESS', default: '64', meaning: 'most such sockets from one IP address', ...COUNT },
  { name: 'CC_HELLO_RATE', default: '50', meaning: 'hellos per second accepted from one IP address (bursts of twice that); more get hello-error busy', ...COUNT },
  { name: 'CC_MAX_REQUESTS_PER_COMPUTER', default: '128', meaning: 'most requests in flight to one computer; more fail at once. Keep it well below 256, CC\'s event queue per computer (it drops events past that)', ...COUNT },
  { name: 'CC_LINK_YOUNG_GEN_MB', default: '8', meaning: 'while computers link (until 250 ms after the last handshake), V8\'s young generation grows to at most this many MiB (0: as V8 decides, up to 32; V8 takes 2 whatever the bound)', min: 0, max: 1024 },
  { name: 'CC_LINK_MAX_BYTES_PER_S', default: String(MiB), meaning: 'frame bytes one link socket may send a second (frames, pings and pongs count at least 256); more pauses its reading until the second is over', ...BYTES },
  { name: 'CC_LINK_MAX_UNSENT_BYTES', default: String(32 * MiB), meaning: 'most bytes sent to one computer that it may leave unread (written, not yet taken by its socket); a computer that leaves more is dropped (it stopped reading)', min: MiB, max: 1024 * MiB },
  { name: 'CC_MAX_FILE_BYTES', default: String(16 * MiB), meaning: 'largest file read-file and write-file move (in pieces that fit the frame limit); larger is refused', ...BYTES },
  { name: 'MCP_MAX_BATCH', default: '100', meaning: 'most messages in one JSON-RPC batch (2025-03-26 clients); more get 400', ...COUNT },
  { name: 'MCP_MAX_CONCURRENT_CALLS', default: '1024', meaning: 'most tool calls running at once; more get HTTP 503 with Retry-After', ...COUNT },
  { name: 'MCP_CALL_RATE', default: '10000', meaning: 'tool calls a second one client may start (MCP, REST; a client: its MCP_AUTH_TOKEN, else its address from another machine, its session or connection on loopback, the stdio pipe); more get JSON-RPC error -32029 (HTTP 429 with Retry-After)', ...COUNT },
  { name: 'MCP_CALL_BURST', default: '10000', meaning: 'tool calls one client may start at once, beyond MCP_CALL_RATE, after it made none for a while', ...COUNT },
  { name: 'MCP_ALLOW_UNAUTHENTICATED', default: 'off', meaning: 'on: allow MCP on a non-loopback address without MCP_AUTH_TOKEN', values: ON_OFF },
  { name: 'CC_CONFIG', default: '', meaning: 'path of a JSON file with config-defined Lua tools and upstream MCP servers' },
  { name: 'CC_UPSTREAM_TIMEOUT_MS', default: '60000', meaning: 'default timeout of each request to an upstream MCP server', ...DURATION },
  { name: 'MCP_LIST_TTL_MS', default: '0', meaning: 'ttlMs on 2026-07-28 server/discover and tools/list results: how long clients may cache them (0: refetch when needed)', min: 0, max: 86_400_000 },
  { name: 'MCP_MAX_JSON_DEPTH', default: '64', meaning: 'deepest nesting of arrays/objects in an MCP or REST body; deeper gets a 400 error', min: 2, max: 1000 },
  { name: 'MCP_PATTERN_MAX_CHARS', default: '1000', meaning: 'longest argument a tool schema\'s "pattern" (or a patternProperties key) is run on; a longer one fails the call, so a regex cannot stall the bridge on a huge string', min: 1, max: 1_000_000 },
  { name: 'CC_MAX_JSON_DEPTH', default: '64', meaning: 'deepest nesting in a computer\'s frame; deeper is dropped (a response fails its request)', ...DEPTH },
  { name: 'MCP_SEND_STALL_MS', default: '30000', meaning: 'a client that takes none of its answer (written 64 KiB at a time) for this long is cut off and the answer freed', ...DURATION },
  { name: 'MCP_MAX_SUBSCRIPTIONS', default: '256', meaning: 'most 2026-07-28 subscriptions/listen streams open at once (stdio and HTTP together); one more gets JSON-RPC error -32003 (HTTP 503), unless a client holding 2 more than the newcomer\'s would gives up its oldest', min: 1, max: 100_000 },
  { name: 'MCP_MAX_SUBSCRIPTIONS_PER_CLIENT', default: '32', meaning: 'most 2026-07-28 subscriptions/listen one client holds (a client: its MCP_AUTH_TOKEN, the stdio connection, or over HTTP without tokens its remote address, which every client on this machine shares); one more ends its oldest, answered with -32003', min: 1, max: 100_000 },
  { name: 'MCP_LISTEN_KEEPALIVE_MS', default: '15000', meaning: 'every open HTTP event stream (subscriptions/listen, GET /mcp) gets an SSE comment line this often, so proxies and clients with idle timeouts keep it open (0: never)', min: 0, max: 3_600_000 },
  { name: 'CC_UPSTREAM_RELIST_MS', default: '1000', meaning: 'least time from one tools/list of an upstream server to the next that its notifications/tools/list_changed causes; notices meanwhile are merged into that next listing (none lost). 0: list again as soon as the last listing is answered', min: 0, max: 3_600_000 },
  { name: 'CC_UPSTREAM_MAX_JSON_DEPTH', default: '64', meaning: 'deepest nesting in a message from an upstream MCP server; deeper fails the call it answers (or is dropped)', ...DEPTH },
  { name: 'MCP_MAX_GET_STREAMS', default: '256', meaning: 'most GET /mcp event streams (the 2025 revisions\' change notices) open at once; more get HTTP 503 (0: no GET stream, it answers 405, and initialize over HTTP does not declare tools.listChanged). At the limit a new stream first ends a spare: its own session\'s oldest, else the oldest of the session holding the most streams when that is 2 or more', min: 0, max: 1_000_000 },
  { name: 'MCP_MAX_GET_STREAMS_PER_SESSION', default: '4', meaning: 'most GET /mcp event streams one session (Mcp-Session-Id) holds; one more ends the session\'s oldest stream (notices go to its newest only), so a reconnecting client is never refused for its own dead streams', ...COUNT },
  { name: 'MCP_MAX_GET_STREAMS_PER_CLIENT', default: '32', meaning: 'most GET /mcp event streams one client holds over all its sessions (a client: its MCP_AUTH_TOKEN, or without tokens its remote address, which every client on this machine shares); one more ends that client\'s oldest stream, so a client starting session after session cannot hold every place of MCP_MAX_GET_STREAMS', ...COUNT },
  { name: 'MCP_SESSION_KEY_FILE', default: '', meaning: 'file keeping the key that signs Mcp-Session-Id (2025 revisions) across restarts, so a client reconnecting its GET /mcp stream with an id from before a restart gets it instead of 404; 64 lowercase hex digits, made (0600, atomically) when the file does not exist; a file of another size or content, unreadable, or open to group or others stops the start. Empty: a new key each start' },
  { name: 'CC_UPSTREAM_MAX_MESSAGE_BYTES', default: String(4 * MiB), meaning: 'largest message an upstream MCP server may send; larger is dropped', ...BYTES },
];
