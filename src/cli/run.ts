// cc-mcp: runs one command against a bridge over MCP (the hand-rolled client and its Streamable
// HTTP transport). I/O comes in as functions, so this runs the same under test and in a terminal.
import { RpcClientError } from '../jsonrpc/client.js';
import { isRecord } from '../jsonrpc/message.js';
import { shownText } from '../jsonrpc/quote.js';
import { splitTokens } from '../auth/tokens.js';
import { HttpTransport } from '../upstream/http.js';
import { McpClient } from '../upstream/mcp-client.js';
import { USAGE, UsageError, pairsToArgs, parseArgs, type Command, type Invocation } from './args.js';
import { renderHealth, renderPins, renderResult, renderTools, terminalText } from './render.js';

export const EXIT = { ok: 0, toolError: 1, usage: 2, unreachable: 3, interrupted: 130 } as const;
/** Longer than the longest exec-lua timeout (300 s), so the bridge always answers first. */
export const CALL_TIMEOUT_MS = 330_000;
const HEALTH_TIMEOUT_MS = 10_000;
const MAX_ANSWER_BYTES = 64 * 1024 * 1024;

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  readFile(path: string): Promise<string>;
  readStdin(): Promise<string>;
  env: Readonly<Record<string, string | undefined>>;
  /** Aborted on Ctrl-C: the call in flight is cancelled at the bridge. */
  signal: AbortSignal;
  /** stdout is a terminal: what a computer or upstream server chose is printed with control characters escaped (terminalText). */
  isTTY?: boolean;
}

class Exit extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

function token(env: CliIo['env']): string | null {
  const own = env.CC_MCP_TOKEN?.trim();
  if (own) return own;
  // split as the bridge splits it (commas or whitespace): "a b" is two tokens there, so its first is "a"
  const first = splitTokens(env.MCP_AUTH_TOKEN ?? '')[0];
  return first ?? null;
}

function headers(env: CliIo['env']): Record<string, string> {
  const t = token(env);
  return t ? { authorization: `Bearer ${t}` } : {};
}

async function health(inv: Invocation, io: CliIo): Promise<number> {
  const url = new URL('/health', inv.url);
  const { res, body } = await requestJson(url, 'GET', io);
  if (res.status !== 200 || !isRecord(body) || body.ok !== true) {
    throw new Exit(EXIT.unreachable, `${url} answered HTTP ${res.status}; is this a cc-mcp-bridge?`);
  }
  io.out(inv.json ? `${JSON.stringify(body, null, 2)}\n` : `${renderHealth(body)}\n`);
  return EXIT.ok;
}

/** One plain HTTP request to the bridge with the bearer token; `body` is null when the answer is not JSON. */
async function requestJson(url: URL, method: 'GET' | 'POST', io: CliIo): Promise<{ res: Response; body: unknown }> {
  let res: Response;
  try {
    res = await fetch(url, { method, headers: headers(io.env), signal: AbortSignal.any([io.signal, AbortSignal.timeout(HEALTH_TIMEOUT_MS)]) });
  } catch (err) {
    throw unreachable(url.origin, causeOf(err));
  }
  const text = await res.text();
  try {
    return { res, body: JSON.parse(text) };
  } catch {
    return { res, body: null };
  }
}

/** GET /pins or POST /pins/<id>/reset: the operator's pins, over plain HTTP with the bearer token. */
async function pinsCommand(inv: Invocation, io: CliIo, command: Extract<Command, { kind: 'pins' | 'pin-reset' }>): Promise<number> {
  const url = new URL(command.kind === 'pins' ? '/pins' : `/pins/${command.computerId}/reset${command.allowOldKey ? '?allowOldKey=true' : ''}`, inv.url);
  const { res, body } = await requestJson(url, command.kind === 'pins' ? 'GET' : 'POST', io);
  if (res.status === 401) throw refusedToken(url.origin, io.env);
  if (!isRecord(body)) throw new Exit(EXIT.unreachable, `${url} answered HTTP ${res.status} without JSON; is this a cc-mcp-bridge?`);
  if (res.status !== 200 || body.ok !== true) {
    const why = typeof body.error === 'string' ? body.error : `HTTP ${res.status}`;
    const more = typeof body.message === 'string' ? `: ${body.message}` : '';
    // a refused token is exit 3, as for every other command
    throw new Exit(res.status === 401 ? EXIT.unreachable : EXIT.toolError, `the bridge refused (HTTP ${res.status}): ${why}${more}`);
  }
  io.out(inv.json ? `${JSON.stringify(body, null, 2)}\n` : `${renderPins(body)}\n`);
  return EXIT.ok;
}

function causeOf(err: unknown): string {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  return e.cause?.code ?? e.cause?.message ?? e.message;
}

/** What a network error code means to someone who only ran cc-mcp; null for codes said as they are. */
const NETWORK_MEANING: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'nothing listens there',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name does not resolve',
  EHOSTUNREACH: 'that host cannot be reached',
  ENETUNREACH: 'that network cannot be reached',
  ETIMEDOUT: 'the connect got no answer',
  UND_ERR_CONNECT_TIMEOUT: 'the connect got no answer',
};

/**
 * The line for a bridge that cannot be reached at all: the network code in words, and what to do.
 * `detail` is a bare code (fetch's cause) or the MCP client's sentence, which ends in the code
 * (`connection closed before initialize was answered: cannot reach <url>: ECONNREFUSED`): the first
 * half of that only repeated the URL, and "closed before initialize was answered" read as if the
 * bridge had been reached.
 */
function unreachable(where: string, detail: string): Exit {
  const code = /^[A-Z_]+$/.test(detail) ? detail : /: cannot reach \S+: ([A-Z_]+)$/.exec(detail)?.[1];
  const meaning = code !== undefined && Object.hasOwn(NETWORK_MEANING, code) ? NETWORK_MEANING[code] : undefined;
  if (meaning === undefined) return new Exit(EXIT.unreachable, `cannot reach the bridge at ${where}: ${detail}`);
  return new Exit(
    EXIT.unreachable,
    `cannot reach the bridge at ${where}: ${meaning} (${code}). Is the bridge running? Start it (npm start in its folder), or give its MCP endpoint with --url or CC_MCP_URL`,
  );
}

/** What a file error code means, for `exec <file>` (before, the bare code: "cannot read dig.lua: ENOENT"). */
const FILE_PROBLEMS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file',
  EISDIR: 'it is a folder, not a file',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
};

/** The arguments of a call, exec or probe, read before anything is sent. */
async function callFor(command: Command, io: CliIo, client: () => Promise<McpClient>): Promise<{ tool: string; args: Record<string, unknown> }> {
  switch (command.kind) {
    case 'probe':
      return { tool: 'probe-computers', args: {} };
    case 'exec': {
      let code: string;
      const { source } = command;
      if ('code' in source) code = source.code;
      else if ('stdin' in source) code = await io.readStdin();
      else {
        try {
          code = await io.readFile(source.file);
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code;
          const why = code !== undefined && Object.hasOwn(FILE_PROBLEMS, code) ? `${FILE_PROBLEMS[code]} (${code})` : (code ?? (err as Error).message);
          throw new Exit(EXIT.usage, `cannot read ${source.file}: ${why}`);
        }
      }
      return { tool: 'exec-lua', args: { ...command.target, code } };
    }
    case 'call': {
      if ('json' in command.args) return { tool: command.tool, args: command.args.json };
      // key=value needs the tool's schema to know which values are strings
      const tools = await (await client()).listTools(io.signal);
      const tool = tools.find((t) => t.name === command.tool);
      if (!tool) throw new Exit(EXIT.usage, `unknown tool ${JSON.stringify(command.tool)}; cc-mcp tools lists them`);
      const properties = isRecord(tool.inputSchema.properties) ? tool.inputSchema.properties : {};
      return { tool: command.tool, args: pairsToArgs(command.args.pairs, properties) };
    }
    /* c8 ignore next 2 */
    default:
      throw new Error(`not a tool call: ${command.kind}`);
  }
}

/**
 * A 401 from the bridge: it was reached, and refused the token cc-mcp sent (or the lack of one).
 * Before, `cannot reach the bridge at <url>: initialize did not get through: HTTP 401: {"jsonrpc":...}`
 * (a JSON body, "cannot reach" though it answered) or, for pins, `unauthorized: Unauthorized: send the
 * header Authorization: Bearer <token>`, an HTTP header a cc-mcp user does not write.
 */
function refusedToken(where: string, env: CliIo['env']): Exit {
  const sent = token(env) !== null;
  const what = sent ? 'refused the token cc-mcp sent (CC_MCP_TOKEN, else the first of MCP_AUTH_TOKEN)' : 'needs a token (it has MCP_AUTH_TOKEN set) and cc-mcp sent none';
  return new Exit(EXIT.unreachable, `the bridge at ${where} ${what} (HTTP 401): set CC_MCP_TOKEN to one of the bridge's MCP_AUTH_TOKEN tokens`);
}

function fromRpcError(err: RpcClientError, url: string, env: CliIo['env']): Exit {
  switch (err.code) {
    case 'ERR_RPC_CANCELLED':
      return new Exit(EXIT.interrupted, 'interrupted; the call was cancelled at the bridge');
    case 'ERR_RPC_REMOTE':
      // -32602: the bridge refused the request as given (an unknown tool name, say)
      return new Exit(err.rpcCode === -32602 ? EXIT.usage : EXIT.toolError, `the bridge refused: ${err.message}`);
    default:
      if (/\bHTTP 401\b/.test(err.message)) return refusedToken(url, env);
      return unreachable(url, err.message);
  }
}

async function overMcp(inv: Invocation, io: CliIo, version: string): Promise<number> {
  let connected: McpClient | null = null;
  const client = async () => {
    if (connected) return connected;
    const transport = new HttpTransport({ url: inv.url, headers: headers(io.env), maxMessageBytes: MAX_ANSWER_BYTES, listen: false });
    // Ctrl-C: the notice (with the session id from initialize) goes first, then the request closes
    const c = new McpClient(transport, { timeoutMs: CALL_TIMEOUT_MS, clientInfo: { name: 'cc-mcp', version }, noticeBeforeClose: true });
    await c.connect(io.signal);
    connected = c;
    return c;
  };
  try {
    if (inv.command.kind === 'tools') {
      const tools = await (await client()).listTools(io.signal);
      io.out(inv.json ? `${JSON.stringify(tools, null, 2)}\n` : `${renderTools(tools)}\n`);
      return EXIT.ok;
    }
    const { tool, args } = await callFor(inv.command, io, client);
    const result = await (await client()).callTool(tool, args, { signal: io.signal });
    const rendered = inv.json ? JSON.stringify(result, null, 2) : renderResult(result);
    // to a terminal, a computer's text cannot act on it; piped, it stays byte for byte
    const text = io.isTTY === true ? terminalText(rendered) : rendered;
    if (text !== '') io.out(text.endsWith('\n') ? text : `${text}\n`);
    if (result.isError === true) throw new Exit(EXIT.toolError, `${tool} answered with an error`);
    return EXIT.ok;
  } catch (err) {
    if (err instanceof RpcClientError) throw fromRpcError(err, inv.url, io.env);
    throw err;
  } finally {
    // after Ctrl-C the client's notifications/cancelled is still on its way, and closing the
    // transport would abort it: leave it be; the process exits once it is sent
    if (!io.signal.aborted) await (connected as McpClient | null)?.close('done');
  }
}

/** Runs cc-mcp with `argv` (without node and the script); resolves with the exit status. */
export async function runCli(argv: readonly string[], io: CliIo, version: string): Promise<number> {
  try {
    const inv = parseArgs(argv, io.env);
    switch (inv.command.kind) {
      case 'help':
        io.out(USAGE);
        return EXIT.ok;
      case 'version':
        io.out(`cc-mcp ${version}\n`);
        return EXIT.ok;
      case 'health':
        return await health(inv, io);
      case 'pins':
      case 'pin-reset':
        return await pinsCommand(inv, io, inv.command);
      default:
        return await overMcp(inv, io, version);
    }
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`cc-mcp: ${err.message} (cc-mcp --help shows the usage)\n`);
      return EXIT.usage;
    }
    if (err instanceof Exit) {
      // one line, and no control character from an answer's error text reaches the terminal
      io.err(`cc-mcp: ${shownText(err.message)}\n`);
      return err.status;
    }
    throw err;
  }
}
