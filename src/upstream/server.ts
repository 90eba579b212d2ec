// One upstream MCP server, supervised: connect (initialize, tools/list), offer its tools as
// `<id>__<name>`, re-list on list_changed, restart with backoff (1, 2, 4 ... 30 s) when it ends.
// While it is not up its tools leave the list and a call to one answers isError saying why.
import { isStdio, type ServerConfig } from '../config/file.js';
import { ToolCallParams } from '../jsonrpc/ndjson.js';
import { quoteValue } from '../jsonrpc/quote.js';
import type { Logger } from '../log.js';
import { budgetedLogger } from '../log-budget.js';
import type { CancelSignal } from '../cancel.js';
import type { ToolSource } from '../tools/registry.js';
import { failedResult, type Tool, type ToolResult } from '../tools/tool.js';
import { McpClient, type UpstreamTool } from './mcp-client.js';
import { callEnd, offeredTool, unavailableTool, type CallEnds } from './offered-tool.js';
import { SEPARATOR, bridgeToolName } from './names.js';
import { transportFor } from './transport-for.js';

export const MAX_BACKOFF_MS = 30_000;

export type ServerState = 'starting' | 'up' | 'down' | 'stopped';

export interface ServerStatus {
  id: string;
  transport: 'stdio' | 'http';
  state: ServerState;
  /** Tools offered now (0 unless up). */
  tools: number;
  /** Why it is down (or stopped). */
  reason?: string;
  /** Restarts since the bridge started it. */
  restarts: number;
}

export interface UpstreamDeps {
  log: Logger;
  /** Default timeout of every request to the server (CC_UPSTREAM_TIMEOUT_MS). */
  timeoutMs: number;
  /** Largest message accepted from the server (CC_UPSTREAM_MAX_MESSAGE_BYTES). */
  maxMessageBytes: number;
  /** Deepest nesting of a message from the server (CC_UPSTREAM_MAX_JSON_DEPTH); 64 when absent. */
  maxJsonDepth?: number;
  version: string;
  /** Called whenever the tools this server offers change (it came up, went down, re-listed). */
  onChange(): void;
  /** First restart delay; doubles per failure up to MAX_BACKOFF_MS (default 1000). */
  backoffMs?: number;
  /** Least ms from the start of one tools/list to the next on list_changed (CC_UPSTREAM_RELIST_MS; default RELIST_MS). */
  relistMs?: number;
}

/** CC_UPSTREAM_RELIST_MS's default. */
export const RELIST_MS = 1000;

/** Lines a second, per level, that an upstream server can make the bridge log (its stderr, broken lines). */
export const PEER_LOG_LINES_PER_S = 50;

export const sourceIdOf = (serverId: string) => `upstream:${serverId}`;

export class UpstreamServer {
  readonly id: string;
  readonly source: ToolSource;
  private state: ServerState = 'starting';
  private reason = '';
  private offered: Tool[] = [];
  private client: McpClient | null = null;
  private failures = 0;
  private restarts = 0;
  private wake: (() => void) | null = null;
  private listing: Promise<void> | null = null;
  private listAgain = false;
  /** When the last tools/list of this connection was sent (Date.now()); 0 before the first. */
  private listedAt = 0;
  /** The listing the offered tools were made from, as JSON (install). */
  private listed = '';
  private calls = 0;
  private drained: (() => void) | null = null;
  private readonly name: string;
  private readonly timeoutMs: number;
  /**
   * The log of what the server provokes at will (its stderr lines, lines that are not JSON, malformed
   * messages): at most PEER_LOG_LINES_PER_S lines a second per level, the rest counted. Before, a
   * server writing stderr without pause slowed every call 40-100 times and grew the log 5-13 MB a second.
   */
  private readonly peerLog: Logger;
  /** The re-listing lines, which a server provokes at will too (a list_changed after every listing): their own budget. */
  private readonly relistLog: Logger;

  constructor(
    readonly config: ServerConfig,
    private readonly deps: UpstreamDeps,
  ) {
    this.id = config.id;
    this.name = `upstream ${config.id}`;
    this.timeoutMs = config.timeoutMs ?? deps.timeoutMs;
    this.peerLog = budgetedLogger(deps.log, PEER_LOG_LINES_PER_S);
    this.relistLog = budgetedLogger(deps.log, PEER_LOG_LINES_PER_S);
    const prefix = `${config.id}${SEPARATOR}`;
    this.source = {
      id: sourceIdOf(config.id),
      tools: () => this.offered,
      resolve: (name) => (name.startsWith(prefix) && this.state !== 'up' ? this.unavailableTool(name) : undefined),
    };
  }

  /** Read through a method so TypeScript does not narrow it across awaits. */
  private stopped(): boolean {
    return this.state === 'stopped';
  }

  status(): ServerStatus {
    const status: ServerStatus = {
      id: this.id,
      transport: isStdio(this.config) ? 'stdio' : 'http',
      state: this.state,
      tools: this.state === 'up' ? this.offered.length : 0,
      restarts: this.restarts,
    };
    if (this.state === 'down' || this.state === 'stopped') status.reason = this.reason;
    return status;
  }

  start(): void {
    void this.run();
  }

  /**
   * Stops for good: its tools leave at once; calls in flight may finish for up to `drainMs`, then
   * the connection closes (stdio: stdin closed, SIGTERM after 2 s, SIGKILL after 5 s).
   */
  async stop(drainMs = 0, reason = 'stopped'): Promise<void> {
    if (this.state === 'stopped') {
      // stopped again without a drain while its calls drain (a reload retired it, then the bridge shuts
      // down): the drain ends now, and its calls are told this reason
      if (drainMs === 0 && this.drained !== null) {
        this.reason = reason;
        this.drained();
      }
      return;
    }
    this.setState('stopped', reason);
    this.wake?.();
    if (this.calls > 0 && drainMs > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, drainMs);
        this.drained = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    await this.client?.close(this.reason);
  }

  private setState(state: ServerState, reason = ''): void {
    const before = this.offered;
    this.state = state;
    this.reason = reason;
    if (state !== 'up') this.offered = [];
    if (before.length > 0 && this.offered !== before) this.deps.onChange();
  }

  private async run(): Promise<void> {
    const { log } = this.deps;
    while (!this.stopped()) {
      this.setState('starting');
      const client = new McpClient(transportFor(this.config, { maxMessageBytes: this.deps.maxMessageBytes, log: this.peerLog }, this.name), {
        timeoutMs: this.timeoutMs,
        log: this.peerLog,
        name: this.name,
        clientInfo: { name: 'cc-mcp-bridge', version: this.deps.version },
        ...(this.deps.maxJsonDepth !== undefined ? { maxDepth: this.deps.maxJsonDepth } : {}),
      });
      this.client = client;
      this.listedAt = 0;
      const closed = new Promise<string>((resolve) => client.onClose(resolve));
      let reason: string;
      try {
        await client.connect();
        if (this.stopped()) break;
        const upAt = Date.now();
        client.onToolsChanged(() => {
          // a listing under way takes the notice in (listAgain) and has its one failure handler: one
          // handler per notice on its promise grew without bound while a server sent notices
          // faster than it answered the listing (300 MB in 5 s), each logging the same failure
          if (this.listing) this.listAgain = true;
          else this.relist(client).catch((err: Error) => log.warn(`${this.name}: re-listing tools failed: ${err.message}; keeping the previous list`));
        });
        // (install says it is up: a notice that came before this listing's answer has the loop list
        // again, at CC_UPSTREAM_RELIST_MS, before this resolves)
        await this.relist(client);
        reason = await closed;
        if (Date.now() - upAt >= MAX_BACKOFF_MS) this.failures = 0;
      } catch (err) {
        reason = (err as Error).message;
        await client.close(reason).catch(() => {});
      }
      if (this.stopped()) break;
      const delay = Math.min(MAX_BACKOFF_MS, (this.deps.backoffMs ?? 1000) * 2 ** this.failures);
      this.failures++;
      this.restarts++;
      this.setState('down', reason);
      log.warn(`${this.name} is down: ${reason}; restarting in ${delay / 1000} s`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = null;
    }
    await this.client?.close(this.reason || 'stopped');
  }

  /**
   * tools/list again; overlapping notifications collapse into one more listing. A listing starts at
   * least CC_UPSTREAM_RELIST_MS after the one before it: notices that come meanwhile are all answered
   * by that one listing (it is sent after the last of them, so the last change is never lost). Before,
   * a server that said list_changed after every listing was listed again as fast as it answered,
   * forever (about 25% of a core here, with the server's own share).
   */
  private relist(client: McpClient): Promise<void> {
    if (this.listing) {
      this.listAgain = true;
      return this.listing;
    }
    this.listing = (async () => {
      do {
        const waitMs = this.listedAt === 0 ? 0 : this.listedAt + (this.deps.relistMs ?? RELIST_MS) - Date.now();
        if (waitMs > 0) {
          await new Promise((resolve) => setTimeout(resolve, waitMs).unref());
          if (client !== this.client || this.stopped() || client.rpc.closed !== null) return;
        }
        // notices from here on need another listing: this one may have been answered before them
        this.listAgain = false;
        this.listedAt = Date.now();
        const tools = await client.listTools();
        if (client !== this.client || this.stopped()) return;
        this.install(tools);
      } while (this.listAgain);
    })().finally(() => {
      this.listing = null;
    });
    return this.listing;
  }

  private install(tools: UpstreamTool[]): void {
    // a list_changed followed by the same listing (some servers send one after every call) changes
    // nothing: its tools are kept, so no change is announced to every client (each would list again)
    const listed = JSON.stringify(tools);
    if (this.state === 'up' && listed === this.listed) {
      this.relistLog.info(`${this.name} re-listed its tools: ${this.offered.length}, unchanged`);
      return;
    }
    this.listed = listed;
    const offered: Tool[] = [];
    const names = new Set<string>();
    for (const tool of tools) {
      const name = bridgeToolName(this.id, tool.name);
      if (names.has(name)) {
        this.deps.log.warn(`${this.name}: tool ${quoteValue(tool.name)} maps to ${name} like another of its tools; left out`);
        continue;
      }
      names.add(name);
      offered.push(this.adapt(tool, name));
    }
    const wasUp = this.state === 'up';
    this.offered = offered;
    this.state = 'up';
    this.reason = '';
    if (wasUp) this.relistLog.info(`${this.name} re-listed its tools: ${offered.length}`);
    else this.deps.log.info(`${this.name} is up: ${offered.length} tool(s), MCP ${this.client?.protocolVersion}`);
    this.deps.onChange();
  }

  private adapt(tool: UpstreamTool, name: string): Tool {
    // how each call of this tool ends: made once per tool, not two closures per call
    const ends: CallEnds = {
      upstreamName: tool.name,
      ok: (result) => this.settle(tool.name, name, result, null),
      failed: (err) => this.settle(tool.name, name, undefined, err),
    };
    return offeredTool(tool, name, (args, ctx) => this.call(ends, args, ctx.signal));
  }

  private downText(): string {
    if (this.state === 'starting') return `upstream server "${this.id}" is starting; try again shortly`;
    return `upstream server "${this.id}" is down: ${this.reason}`;
  }

  private unavailableTool(name: string): Tool {
    return unavailableTool(name, () => this.downText());
  }

  // the JSON-RPC request's own promise is the call's: its ends map the answer (no .then, no async layers)
  private call(ends: CallEnds, args: Record<string, unknown>, signal: CancelSignal): Promise<ToolResult> {
    const client = this.client;
    if (this.state !== 'up' || !client) return Promise.resolve(failedResult(this.downText(), 'unavailable'));
    this.calls++;
    return client.rpc.request('tools/call', new ToolCallParams(ends.upstreamName, args), { signal }, ends);
  }

  /** The end of a call: what the server answered, or what went wrong (callEnd), once it is no longer counted. */
  private settle(upstreamName: string, name: string, answer: unknown, error: unknown): ToolResult {
    this.calls--;
    if (this.calls === 0) this.drained?.();
    return callEnd(this.id, upstreamName, name, answer, error, this.timeoutMs);
  }
}
