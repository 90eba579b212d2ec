// An MCP client over any Transport: the initialize handshake, tools/list across pages, tools/call
// with cancellation, and list_changed. Results come back exactly as the server sent them.
//
//   const client = new McpClient(new HttpTransport({ url, maxMessageBytes }), { timeoutMs: 30_000 });
//   await client.connect();                      // initialize + notifications/initialized
//   const tools = await client.listTools();      // follows nextCursor
//   const result = await client.callTool('name', { a: 1 }, { signal });
//   await client.close();
import { createHash } from 'node:crypto';
import type { Logger } from '../log.js';
import type { CancelSignal } from '../cancel.js';
import { JsonRpcClient, RpcClientError, type ClientOptions, type RequestOptions, type Transport } from '../jsonrpc/client.js';
import { isRecord } from '../jsonrpc/message.js';
import { quoteValue } from '../jsonrpc/quote.js';
import { SUPPORTED_PROTOCOL_VERSIONS } from '../mcp/protocol.js';
import { MAX_LISTED_PATTERN_CHARS, toolDefinitionProblem, unrunPatterns, type PatternBudget, type UnrunPattern } from './tool-check.js';

/** The revision the bridge offers; it accepts any revision it knows in the answer. */
export const OFFERED_PROTOCOL_VERSION = '2025-11-25';
export const KNOWN_PROTOCOL_VERSIONS: readonly string[] = ['2024-11-05', ...SUPPORTED_PROTOCOL_VERSIONS];
/** A server that pages its tool list past this many pages is cut off there (a cursor loop). */
export const MAX_TOOL_PAGES = 100;

/** A tool as the upstream server lists it; every field it sent is kept. */
export interface UpstreamTool {
  name: string;
  inputSchema: Record<string, unknown>;
  [field: string]: unknown;
}

export interface McpClientOptions {
  timeoutMs: number;
  log?: Logger;
  /** How this server is named in log lines and errors. */
  name?: string;
  clientInfo?: { name: string; version: string };
  /** See ClientOptions.noticeBeforeClose. */
  noticeBeforeClose?: boolean;
  /** Deepest nesting of a message from the server; 64 when absent. */
  maxDepth?: number;
}

export class McpClient {
  readonly rpc: JsonRpcClient;
  protocolVersion: string | null = null;
  serverInfo: Record<string, unknown> | null = null;
  capabilities: Record<string, unknown> = {};
  instructions: string | null = null;

  constructor(
    private readonly transport: Transport,
    private readonly options: McpClientOptions,
  ) {
    const rpcOptions: ClientOptions = { timeoutMs: options.timeoutMs, noticeBeforeClose: options.noticeBeforeClose === true };
    if (options.maxDepth !== undefined) rpcOptions.maxDepth = options.maxDepth;
    if (options.log) rpcOptions.log = options.log;
    if (options.name) rpcOptions.name = options.name;
    this.rpc = new JsonRpcClient(transport, rpcOptions);
  }

  /** Starts the transport and runs the handshake; rejects (and closes) when the server is unusable. */
  async connect(signal?: CancelSignal): Promise<void> {
    await this.rpc.start();
    const options: RequestOptions = signal ? { signal } : {};
    const result = await this.rpc.request('initialize', {
      protocolVersion: OFFERED_PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: this.options.clientInfo ?? { name: 'cc-mcp-bridge', version: '0' },
    }, options);
    if (!isRecord(result) || typeof result.protocolVersion !== 'string') {
      await this.close('bad initialize answer');
      throw new RpcClientError('ERR_RPC_REMOTE', 'initialize answered without a protocolVersion');
    }
    if (!KNOWN_PROTOCOL_VERSIONS.includes(result.protocolVersion)) {
      await this.close('unknown protocol revision');
      throw new RpcClientError(
        'ERR_RPC_REMOTE',
        `the server speaks MCP ${result.protocolVersion}; this bridge knows ${KNOWN_PROTOCOL_VERSIONS.join(', ')}`,
      );
    }
    this.protocolVersion = result.protocolVersion;
    this.serverInfo = isRecord(result.serverInfo) ? result.serverInfo : null;
    this.capabilities = isRecord(result.capabilities) ? result.capabilities : {};
    this.instructions = typeof result.instructions === 'string' ? result.instructions : null;
    this.transport.setProtocolVersion?.(result.protocolVersion);
    await this.rpc.notify('notifications/initialized');
  }

  /** Every tool, following nextCursor; a malformed entry is skipped with a log line. */
  async listTools(signal?: CancelSignal): Promise<UpstreamTool[]> {
    const tools: UpstreamTool[] = [];
    let cursor: string | undefined;
    let skipped = 0;
    for (let page = 0; page < MAX_TOOL_PAGES; page++) {
      const options: RequestOptions = signal ? { signal } : {};
      const result = await this.rpc.request('tools/list', cursor === undefined ? {} : { cursor }, options);
      // each page is checked in one turn of the event loop: its patterns within a bound
      const budget: PatternBudget = { chars: MAX_LISTED_PATTERN_CHARS, skipped: 0 };
      if (!isRecord(result) || !Array.isArray(result.tools)) throw new RpcClientError('ERR_RPC_REMOTE', 'tools/list answered without a tools array');
      for (const tool of result.tools) {
        if (!(isRecord(tool) && typeof tool.name === 'string' && tool.name !== '' && isRecord(tool.inputSchema))) {
          this.options.log?.warn(`${this.options.name ?? 'upstream'} listed a tool without a name or inputSchema; skipped`);
          continue;
        }
        // a definition our clients would refuse (or, for x-mcp-header, must drop) is not passed on
        const problem = toolDefinitionProblem(tool);
        if (problem) {
          this.options.log?.warn(`${this.options.name ?? 'upstream'} listed tool ${quoteValue(tool.name)} with a malformed definition (${problem}); skipped`);
          continue;
        }
        // 2025-11-25 tasks: such a tool answers only task-augmented calls (-32601 to any other), which the
        // bridge neither makes nor offers its clients (it declares no tasks capability): every call would fail
        if (isRecord(tool.execution) && tool.execution.taskSupport === 'required') {
          this.options.log?.warn(`${this.options.name ?? 'upstream'} listed tool ${quoteValue(tool.name)} that takes only task-augmented calls (execution.taskSupport "required"), which the bridge does not make; skipped`);
          continue;
        }
        tools.push(tool as UpstreamTool);
        for (const unrun of unrunPatterns(tool.inputSchema as Record<string, unknown>, 8, budget)) this.warnUnrun(tool.name, unrun);
      }
      skipped += budget.skipped;
      if (typeof result.nextCursor !== 'string' || result.nextCursor === '') {
        this.saySkipped(skipped);
        return tools;
      }
      cursor = result.nextCursor;
    }
    this.saySkipped(skipped);
    this.options.log?.warn(`${this.options.name ?? 'upstream'} still had more tools after ${MAX_TOOL_PAGES} pages; the rest are left out`);
    return tools;
  }

  private saySkipped(skipped: number): void {
    if (skipped === 0) return;
    this.options.log?.info(
      `${this.options.name ?? 'upstream'} listed more pattern text than the bridge checks when listing (${MAX_LISTED_PATTERN_CHARS} characters a page): ` +
        `${skipped} pattern(s) not checked now; each is checked when a call first needs it, and one the bridge does not run is passed on unchecked`,
    );
  }

  /** Said once per tool, keyword and pattern (a re-listing repeats none): the SHA-256 of tool name + NUL + keyword + NUL + pattern. */
  private readonly unrunSaid = new Set<string>();

  private warnUnrun(tool: string, unrun: UnrunPattern): void {
    // a digest, not the text: 1,000 patterns of up to CC_UPSTREAM_MAX_MESSAGE_BYTES each are not kept
    const key = createHash('sha256').update(`${tool}\u0000${unrun.keyword}\u0000${unrun.pattern}`).digest('base64');
    if (this.unrunSaid.has(key) || this.unrunSaid.size >= 1000) return;
    this.unrunSaid.add(key);
    const [what, passed] = unrun.keyword === 'pattern' ? ['pattern', 'values it would check'] : ['patternProperties key', 'argument keys only it could match'];
    this.options.log?.warn(
      `${this.options.name ?? 'upstream'} tool ${quoteValue(tool)}: the bridge does not run the ${what} ${quoteValue(unrun.pattern)} at ${unrun.at} (${unrun.problem}); ` +
        `${passed} are passed on unchecked (the upstream checks its own arguments)`,
    );
  }

  /** Calls a tool; resolves with the server's result object untouched (checked by toolResult). */
  callTool(name: string, args: Record<string, unknown>, options: RequestOptions = {}): Promise<Record<string, unknown>> {
    return this.rpc.request('tools/call', { name, arguments: args }, options).then((result) => toolResult(name, result));
  }

  /** Calls `handler` when the server says its tool list changed. */
  onToolsChanged(handler: () => void): () => void {
    return this.rpc.onNotification('notifications/tools/list_changed', handler);
  }

  onClose(handler: (reason: string) => void): () => void {
    return this.rpc.onClose(handler);
  }

  close(reason?: string): Promise<void> {
    return this.rpc.close(reason);
  }
}

/** The answer to tools/call of `name` as a result object; throws ERR_RPC_REMOTE / ERR_RPC_MALFORMED. */
export function toolResult(name: string, result: unknown): Record<string, unknown> {
  if (!isRecord(result)) throw new RpcClientError('ERR_RPC_REMOTE', `tools/call of ${name} answered with something that is not a result object`);
  const wrong = malformedResult(result);
  if (wrong) throw new RpcClientError('ERR_RPC_MALFORMED', `tools/call of ${name}: the result's ${wrong}`);
  return result;
}

function kind(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** The string fields each content type of the MCP schema requires (other types pass unchecked). */
const REQUIRED_STRINGS: Readonly<Record<string, readonly string[]>> = {
  text: ['text'],
  image: ['data', 'mimeType'],
  audio: ['data', 'mimeType'],
  resource_link: ['uri', 'name'],
};

/** The first required field a known content block lacks (or has as a non-string), or null. */
function missingField(block: Record<string, unknown>): string | null {
  if (block.type === 'resource') {
    const resource = block.resource;
    if (!isRecord(resource) || typeof resource.uri !== 'string') return 'a "resource" object with a string "uri"';
    if (typeof resource.text !== 'string' && typeof resource.blob !== 'string') return 'a string "resource.text" or "resource.blob"';
    return null;
  }
  // own keys only: a type named "constructor" or "__proto__" would find Object.prototype's members
  const required = (Object.hasOwn(REQUIRED_STRINGS, block.type as string) && REQUIRED_STRINGS[block.type as string]) || [];
  for (const field of required) {
    if (typeof block[field] !== 'string') return `a string "${field}", got ${kind(block[field])}`;
  }
  return null;
}

/**
 * What is wrong with a tools/call result in the fields every client reads (content blocks with a
 * type, isError, structuredContent), or null. Everything else passes through unchecked.
 */
export function malformedResult(result: Record<string, unknown>): string | null {
  const { content, isError, structuredContent } = result;
  if (!Array.isArray(content)) return `content must be an array, got ${kind(content)}`;
  for (let i = 0; i < content.length; i++) {
    const block: unknown = content[i];
    if (!isRecord(block)) return `content[${i}] must be an object, got ${kind(block)}`;
    if (typeof block.type !== 'string') return `content[${i}] has no "type"`;
    const missing = missingField(block);
    if (missing) return `content[${i}] (${block.type}) needs ${missing}`;
  }
  if (isError !== undefined && typeof isError !== 'boolean') return `isError must be true or false, got ${kind(isError)}`;
  if (structuredContent !== undefined && !isRecord(structuredContent)) return `structuredContent must be an object, got ${kind(structuredContent)}`;
  return null;
}
