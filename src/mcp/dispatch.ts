// MCP method dispatch over plain values: a parsed JSON body in, the JSON-RPC answer out.
import type { Config } from '../config.js';
import type { LinkRegistry } from '../link/registry.js';
import type { Logger } from '../log.js';
import { Cancellation } from '../cancel.js';
import type { ToolRegistry } from '../tools/registry.js';
import { callTool } from '../tools/call.js';
import type { ToolResult } from '../tools/tool.js';
import {
  INTERNAL_ERROR,
  INVALID_PARAMS,
  INVALID_REQUEST,
  METHOD_NOT_FOUND,
  RpcError,
  classifyReceived,
  errorResponse,
  isRecord,
  resultResponse,
  type JsonRpcId,
  type Message,
  type Response,
} from '../jsonrpc/message.js';
import { LATEST_PROTOCOL_VERSION, negotiate } from './protocol.js';
import type { CacheHints, ServerInfo } from './modern.js';
import { boundsProblem } from '../jsonrpc/bounds.js';
import { cutText, quoteValue } from '../jsonrpc/quote.js';
import type { Metrics } from '../metrics.js';
import { atMostAllowed } from '../plural.js';
import { Subscriptions } from './subscriptions.js';
import { PRE_LINK_REVISION, forPreLinkClient } from './older-content.js';
import { LogBudget } from '../log-budget.js';
import { CANCELLED_BY_CLIENT, RATE_LIMITED, SERVER_BUSY, callKey, cancelledByClient, refusedReply, type Caller, type Reply } from './exchange.js';
import type { CallRate } from '../tools/call-rate.js';

export interface DispatcherOptions {
  links: LinkRegistry;
  tools: ToolRegistry;
  config: Config;
  log: Logger;
  serverVersion: string;
  metrics?: Metrics;
  /** Tool calls per caller per second (MCP_CALL_RATE), shared with REST; absent: no rate limit. */
  rate?: CallRate;
}

const LOCAL: Caller = { scope: 'local' };

const SERVER_NAME = 'cc-mcp-bridge';

function instructions(config: Config): string {
  const parts = [
    'This server operates live ComputerCraft (CC:Tweaked) computers inside Minecraft that are linked to the bridge.',
    'Call probe-computers first: it lists every linked computer by id and label and shows whether it answers.',
  ];
  if (config.execLua) {
    parts.push(
      'Use exec-lua to run Lua 5.2 (CC dialect) on one computer, chosen by computerId or exact label; printed output and returned values come back.',
      'Code runs with the computer\'s full authority. Keep chunks short or yielding: CC stops code that runs about 7 s without yielding.',
    );
  }
  return parts.join(' ');
}

/**
 * initialize inside a batch (2025-03-26, the one revision with batches, forbids it: nothing else may
 * happen before initialization completes). Answering it anyway left the client half set up: over
 * HTTP no Mcp-Session-Id (handed out with a lone initialize's answer only), so no GET stream for the
 * listChanged it was told of; on stdio the surface never saw it as initialized.
 */
const BATCHED_INITIALIZE = 'Invalid Request: initialize must be sent alone, not in a JSON-RPC batch (MCP 2025-03-26 lifecycle)';

export class Dispatcher {
  /** Calls in flight by JSON-RPC id, so notifications/cancelled can reach them (a Set only when ids repeat). */
  private readonly inFlight = new Map<string, Cancellation | Set<Cancellation>>();
  /** Calls cancelled by their client's notifications/cancelled (not by a closed request or EOF). */
  private readonly noticed = new WeakSet<Cancellation>();
  /** Open 2026-07-28 subscriptions/listen streams, every transport's (MCP_MAX_SUBSCRIPTIONS). */
  readonly subscriptions: Subscriptions;
  /** initialize lines (logInitialize): a client may send initialize without pause. */
  private readonly initializeLog = new LogBudget(50);

  constructor(private readonly options: DispatcherOptions) {
    const { tools, config } = options;
    this.subscriptions = new Subscriptions({
      max: config.maxSubscriptions,
      perClient: config.maxSubscriptionsPerClient,
      watchTools: (listener) => tools.watch(listener),
      serverInfo: () => this.describe().serverInfo,
    });
  }

  /** Who this server is, what it tells the model, and how long lists may be cached (2026-07-28). */
  describe(): { serverInfo: ServerInfo; instructions: string; cache: CacheHints } {
    const { config, serverVersion } = this.options;
    return {
      serverInfo: { name: SERVER_NAME, title: 'ComputerCraft MCP bridge', version: serverVersion },
      instructions: instructions(config),
      // with tokens, what a caller sees must not be shared with callers that have none
      cache: { ttlMs: config.listTtlMs, cacheScope: config.mcpAuthTokens.length > 0 ? 'private' : 'public' },
    };
  }

  /** The inputSchema tools/list shows for a listed tool (upstream definitions as given); undefined if none. */
  listedInputSchema(name: unknown): unknown {
    const tool = this.options.tools.list().find((t) => t.name === name);
    return tool && (tool.definition ? tool.definition.inputSchema : tool.inputSchema);
  }

  get activeCalls(): number {
    let n = 0;
    for (const calls of this.inFlight.values()) n += calls instanceof Cancellation ? 1 : calls.size;
    return n;
  }

  /**
   * The 400 answer for a body nested deeper than MCP_MAX_JSON_DEPTH; null when it is within bounds.
   * `textLength`: the length of the JSON text the body was parsed from, in bytes or in UTF-16 units
   * (a bracket is one of either). d levels take 2d brackets, so a text shorter than
   * 2 * (MCP_MAX_JSON_DEPTH + 1) is within the bound without a walk: nearly every request (a probe
   * is 97 bytes, the limit 64 levels takes 130). Unknown (Infinity): the body is walked.
   */
  tooDeep(body: unknown, textLength = Infinity): Reply | null {
    const maxDepth = this.options.config.maxJsonDepth;
    if (textLength < 2 * (maxDepth + 1)) return null;
    // bounded before anything walks it (validation, logging, serialising the answer)
    const problem = boundsProblem(body, { maxDepth });
    if (!problem) return null;
    // classify looks at the top level only, so it is safe on any depth
    const message = Array.isArray(body) ? null : classifyReceived(body);
    const id = message && (message.kind === 'request' || message.kind === 'invalid') ? message.id : null;
    return { status: 400, body: errorResponse(id, INVALID_REQUEST, `Invalid Request: the body ${problem} (MCP_MAX_JSON_DEPTH)`) };
  }

  /**
   * Handles one parsed body: a single message, or a batch when the transport allows them.
   * `textLength`: the length of the text it was parsed from, when known (see tooDeep).
   */
  async handleBody(body: unknown, batchesAllowed: boolean, caller: Caller = LOCAL, textLength = Infinity): Promise<Reply> {
    const tooDeep = this.tooDeep(body, textLength);
    if (tooDeep) return tooDeep;
    if (!Array.isArray(body)) {
      const message = classifyReceived(body);
      if (message.kind === 'invalid') {
        return { status: 400, body: errorResponse(message.id, INVALID_REQUEST, `Invalid Request: ${message.reason}`) };
      }
      const response = await this.answer(message, caller);
      const refused = response && 'error' in response ? refusedReply(response) : null;
      if (refused) return refused;
      if (cancelledByClient(response)) return { status: 200, body: response, cancelled: true };
      return response ? { status: 200, body: response } : { status: 202, body: null };
    }
    if (!batchesAllowed) {
      return {
        status: 400,
        body: errorResponse(null, INVALID_REQUEST, 'Invalid Request: JSON-RPC batches are not supported in this protocol revision'),
      };
    }
    if (body.length === 0) return { status: 400, body: errorResponse(null, INVALID_REQUEST, 'Invalid Request: empty batch') };
    if (body.length > this.options.config.maxBatch) {
      const message = `Invalid Request: the batch holds ${body.length} messages; ${atMostAllowed(this.options.config.maxBatch)} (MCP_MAX_BATCH)`;
      return { status: 400, body: errorResponse(null, INVALID_REQUEST, message) };
    }
    const responses = (await Promise.all(body.map((item) => this.answerBatched(classifyReceived(item), caller)))).filter(
      (r): r is Response => r !== null,
    );
    return responses.length ? { status: 200, body: responses } : { status: 202, body: null };
  }

  /** One message; null when it needs no answer (notifications, client responses). */
  handleMessage(value: unknown, caller: Caller = LOCAL): Promise<Response | null> {
    return this.answer(classifyReceived(value), caller);
  }

  /** One message of a batch: as alone, except that initialize is refused (BATCHED_INITIALIZE). */
  private answerBatched(message: Message, caller: Caller): Promise<Response | null> {
    if (message.kind === 'request' && message.method === 'initialize') return Promise.resolve(errorResponse(message.id, INVALID_REQUEST, BATCHED_INITIALIZE));
    return this.answer(message, caller);
  }

  /** One classified message (a single body is classified once, not again here). */
  private async answer(message: Message, caller: Caller): Promise<Response | null> {
    switch (message.kind) {
      case 'invalid':
        return errorResponse(message.id, INVALID_REQUEST, `Invalid Request: ${message.reason}`);
      case 'response':
        return null;
      case 'notification':
        this.onNotification(caller, message.method, message.params);
        return null;
      case 'request':
        try {
          return resultResponse(message.id, await this.onRequest(caller, message.id, message.method, message.params));
        } catch (err) {
          if (err instanceof RpcError) return errorResponse(message.id, err.rpcCode, err.message, err.data);
          // this message alone fails, with its id; the rest of a batch is answered as usual
          this.options.log.error(`${message.method} failed: ${(err as Error).stack ?? String(err)}`);
          return errorResponse(message.id, INTERNAL_ERROR, 'Internal error; the bridge log has the details');
        }
    }
  }

  /**
   * One info line per initialize: which client connected, on which revision. Before, a client that
   * connected (or one that never got through) left no trace at any LOG_LEVEL, so a user setting up
   * Claude Code or opencode could not tell from the bridge's log whether it had. clientInfo is the
   * client's to choose: quoted, cut, and under a budget (a client may initialize in a loop).
   */
  private logInitialize(clientInfo: unknown, asked: string, answered: string): void {
    const revision = asked === answered ? answered : `${answered}; it asked for ${quoteValue(asked)}`;
    this.logClient(clientInfo, `initialized (protocol ${revision})`);
  }

  /**
   * The same line for a 2026-07-28 client, which has no initialize: its server/discover, with the
   * clientInfo its `_meta` carries (a SHOULD of that revision; "without a name" when absent).
   */
  logDiscover(meta: unknown): void {
    const clientInfo = isRecord(meta) ? meta['io.modelcontextprotocol/clientInfo'] : undefined;
    this.logClient(clientInfo, 'discovered the server (protocol 2026-07-28)');
  }

  private logClient(clientInfo: unknown, what: string): void {
    const info = isRecord(clientInfo) ? clientInfo : {};
    const name = typeof info.name === 'string' ? quoteValue(info.name) : 'without a name';
    const version = typeof info.version === 'string' ? ` version ${quoteValue(info.version)}` : '';
    const line = this.initializeLog.take(`MCP client ${name}${version} ${what}`);
    if (line !== null) this.options.log.info(line);
  }

  private onNotification(caller: Caller, method: string, params: unknown): void {
    if (method !== 'notifications/cancelled' || !isRecord(params)) return;
    const requestId = params.requestId;
    if (typeof requestId !== 'string' && typeof requestId !== 'number') return;
    // a subscriptions/listen on this channel (stdio) ends: nothing more is sent for it
    if (this.subscriptions.cancel(callKey(caller, requestId))) {
      this.options.log.debug(`client ended subscription ${quoteValue(requestId)}`);
      return;
    }
    const calls = this.inFlight.get(callKey(caller, requestId));
    if (!calls) return;
    this.options.log.info(`client cancelled request ${quoteValue(requestId)}${typeof params.reason === 'string' ? `: ${quoteValue(params.reason)}` : ''}`);
    for (const call of calls instanceof Cancellation ? [calls] : calls) {
      this.noticed.add(call);
      call.abort();
    }
  }

  // not async: tools/call hands back callTool's promise as it is (no extra promise per call)
  private onRequest(caller: Caller, id: JsonRpcId, method: string, params: unknown): unknown {
    if (params !== undefined && !isRecord(params)) throw new RpcError(INVALID_PARAMS, 'params must be an object');
    const p = (params ?? {}) as Record<string, unknown>;
    switch (method) {
      case 'initialize': {
        // required by the InitializeRequest schema of every 2025 revision; answering a guessed revision
        // hid a client bug (the answer's version is the one the client must then speak)
        if (typeof p.protocolVersion !== 'string') {
          const problem = p.protocolVersion === undefined ? 'is required' : `must be a string, not ${quoteValue(p.protocolVersion)}`;
          throw new RpcError(INVALID_PARAMS, `Invalid params: initialize's params.protocolVersion ${problem} (the protocol revision the client asks for, e.g. "${LATEST_PROTOCOL_VERSION}")`);
        }
        const { serverInfo, instructions } = this.describe();
        const tools = caller.listChanged ? { listChanged: true } : {};
        const protocolVersion = negotiate(p.protocolVersion);
        this.logInitialize(p.clientInfo, p.protocolVersion, protocolVersion);
        return { protocolVersion, capabilities: { tools }, serverInfo, instructions };
      }
      case 'ping':
        return {};
      case 'tools/list':
        if (p.cursor !== undefined && p.cursor !== null) throw new RpcError(INVALID_PARAMS, 'Invalid cursor: this server never issues cursors');
        return {
          tools: this.options.tools.list().map(({ name, title, description, inputSchema, outputSchema, annotations, definition }) => definition ?? ({
            name,
            title,
            description,
            inputSchema,
            ...(outputSchema ? { outputSchema } : {}),
            ...(annotations ? { annotations: { title, ...annotations } } : {}),
          })),
        };
      case 'tools/call':
        return this.callTool(caller, id, p);
      default:
        throw new RpcError(METHOD_NOT_FOUND, `Method not found: ${cutText(method)}`);
    }
  }

  private async callTool(caller: Caller, id: JsonRpcId, params: Record<string, unknown>): Promise<ToolResult> {
    const { name } = params;
    if (typeof name !== 'string') throw new RpcError(INVALID_PARAMS, 'params.name must be a string');
    // the CallToolRequest schema: a request that breaks it is a protocol error, not a tool's (null, which
    // some clients send for "no arguments", is taken as none, as the tool-call path always has)
    const args = params.arguments;
    if (args !== undefined && args !== null && !isRecord(args)) {
      throw new RpcError(INVALID_PARAMS, `params.arguments must be an object (the tool's arguments by name), not ${Array.isArray(args) ? 'an array' : typeof args}`);
    }
    // aborted by notifications/cancelled for this id, or with the caller's signal (the HTTP request closed)
    const cancel = Cancellation.linked(caller.signal);
    const key = callKey(caller, id);
    const same = this.inFlight.get(key);
    if (same === undefined) this.inFlight.set(key, cancel);
    else if (same instanceof Cancellation) this.inFlight.set(key, new Set([same, cancel]));
    else same.add(cancel);
    try {
      const called = await callTool(this.options, name, params.arguments, cancel, caller.rate ?? caller.scope);
      const { failure } = called;
      if (failure !== null) {
        if (failure.code === 'unknown_tool') throw new RpcError(INVALID_PARAMS, failure.message);
        if (failure.code === 'busy') throw new RpcError(SERVER_BUSY, failure.message, { retryAfterSeconds: 1 });
        if (failure.code === 'rate_limited') throw new RpcError(RATE_LIMITED, failure.message, { retryAfterMs: failure.retryAfterMs });
      }
      // resource_link blocks (2025-06-18) are not content a 2025-03-26 client knows
      const result = caller.revision === PRE_LINK_REVISION ? forPreLinkClient(called.result) : called.result;
      return this.noticed.has(cancel) ? Object.assign({ ...result }, { [CANCELLED_BY_CLIENT]: true }) : result;
    } finally {
      cancel.dispose();
      const calls = this.inFlight.get(key);
      if (calls === cancel) this.inFlight.delete(key);
      else if (calls instanceof Set) {
        calls.delete(cancel);
        if (calls.size === 1) this.inFlight.set(key, calls.values().next().value as Cancellation);
      }
    }
  }
}
