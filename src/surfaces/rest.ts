// Plain REST over the tool registry, on the MCP listener: GET /tools, GET /computers and
// POST /tools/<name>. Calls go through the same path as MCP tools/call; the call's failure code
// becomes an HTTP status, and every error body is {"error": {"code", "message"}}.
import { isUtf8 } from 'node:buffer';
import type { ServerResponse } from 'node:http';
import type { Logger } from '../log.js';
import { Cancellation } from '../cancel.js';
import { isRecord } from '../jsonrpc/message.js';
import { boundsProblem } from '../jsonrpc/bounds.js';
import { callTool, type CallDeps, type CallFailure } from '../tools/call.js';
import { rateKey, retryAfterSeconds } from './rate-key.js';
import { computerList } from '../tools/list-computers.js';
import type { FailureCode, Tool } from '../tools/tool.js';
import { BodyTooLargeError, readBody, sendJson } from './respond.js';
import { UNSUPPORTED_MEDIA_HEADERS, contentTypeProblem } from './content-type.js';
import type { Handler, Methods, RouteContext } from './router.js';
import { quoteValue } from '../jsonrpc/quote.js';

export interface RestDeps extends CallDeps {
  log: Logger;
  maxBodyBytes: number;
}

/** Every status a failure code maps to; tool_error is a result (the tool ran), so 200. */
export const STATUS_BY_FAILURE: Readonly<Record<FailureCode, number>> = {
  unknown_tool: 404,
  unknown_computer: 404,
  invalid_arguments: 422,
  disabled: 403,
  timeout: 504,
  unavailable: 503,
  cancelled: 503,
  tool_error: 200,
  internal: 500,
  busy: 503,
  rate_limited: 429,
};

/** On GET /computers while no computer can link: why (the sentence list-computers puts in its note). */
export const LINK_NOTE_HEADER = 'cc-link-note';

/** `upstream__tool` is how the registry names a tool of upstream server `upstream`. */
export const SERVICE_SEPARATOR = '__';

export function sendError(res: ServerResponse, status: number, code: string, message: string, headers: Record<string, string> = {}): void {
  sendJson(res, status, { error: { code, message } }, headers);
}

/** A 405 in the REST shape, for methods a REST route does not serve. */
export function notAllowed(allow: string): Handler {
  return (req, res, ctx) =>
    sendError(res, 405, 'method_not_allowed', `${req.method} is not allowed on ${ctx.path}; use ${allow}`, { allow });
}

/** Runs a handler; anything it throws becomes a 500 that says nothing internal. */
function guarded(log: Logger, handler: Handler): Handler {
  return async (req, res, ctx) => {
    try {
      await handler(req, res, ctx);
    } catch (err) {
      log.error(`REST ${req.method} ${ctx.path} failed: ${(err as Error).stack ?? String(err)}`);
      if (!res.headersSent) sendError(res, 500, 'internal', 'The bridge failed to answer; its log has the details');
      else res.destroy();
    }
  };
}

const kindOf = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`);

/**
 * The tool a request names: `/tools/<name>` (or an alias's tool), or with ?service= the tool
 * `<service>__<name>`, else the one of that server whose upstream name is `<name>` (`files.read`,
 * offered as `files__files-2e-read`): a REST caller may use the name the server's own documentation
 * gives. Undefined when there is none.
 */
function findTool(tools: CallDeps['tools'], name: string, query: URLSearchParams): Tool | undefined {
  const service = query.get('service');
  if (service === null || service === '') return tools.get(name);
  const exact = tools.get(`${service}${SERVICE_SEPARATOR}${name}`);
  if (exact) return exact;
  // (a scan of the list, not upstream/names.js: a bare start loads no upstream module)
  const prefix = `${service}${SERVICE_SEPARATOR}`;
  return tools.list().find((tool) => tool.upstreamName === name && tool.name.startsWith(prefix));
}

/** POST handler calling `fixed` (an alias), or the tool named by the path after /tools/. */
export function callHandler(deps: RestDeps, fixed?: string): Handler {
  return guarded(deps.log, async (req, res, ctx: RouteContext) => {
    const mediaProblem = contentTypeProblem(req.headers['content-type']);
    if (mediaProblem !== null) return sendError(res, 415, 'unsupported_media_type', mediaProblem, UNSUPPORTED_MEDIA_HEADERS);
    let raw: Buffer;
    try {
      raw = await readBody(req, deps.maxBodyBytes);
    } catch (err) {
      if (err instanceof BodyTooLargeError) return sendError(res, 413, 'body_too_large', err.message, { connection: 'close' });
      deps.log.debug(`REST request body not received: ${(err as Error).message}`);
      res.destroy();
      return;
    }
    let base = fixed;
    if (base === undefined) {
      try {
        base = decodeURIComponent(ctx.rest);
      } catch {
        base = ctx.rest;
      }
    }
    const found = findTool(deps.tools, base, ctx.query);
    if (!found) {
      const service = ctx.query.get('service');
      const where = service ? ` on service ${quoteValue(service)}` : '';
      return sendError(res, 404, 'unknown_tool', `Unknown tool ${quoteValue(base)}${where}; GET /tools lists them`);
    }
    const name = found.name;
    // JSON is UTF-8: bad bytes are not decoded with U+FFFD (that would run changed Lua code or write a changed file)
    if (!isUtf8(raw)) return sendError(res, 400, 'invalid_json', 'The body is not valid UTF-8 (JSON is UTF-8)');
    const text = raw.toString('utf8');
    let args: unknown = {};
    if (text.trim() !== '') {
      try {
        args = JSON.parse(text);
      } catch {
        return sendError(res, 400, 'invalid_json', 'The body is not valid JSON');
      }
    }
    // d levels take 2d brackets: a text shorter than 2 * (MCP_MAX_JSON_DEPTH + 1) is not walked
    const maxDepth = deps.config.maxJsonDepth;
    const tooDeep = text.length < 2 * (maxDepth + 1) ? null : boundsProblem(args, { maxDepth });
    if (tooDeep) return sendError(res, 400, 'invalid_body', `The body ${tooDeep} (MCP_MAX_JSON_DEPTH)`);
    if (!isRecord(args)) {
      return sendError(res, 400, 'invalid_body', `The body must be a JSON object of the tool's arguments, got ${kindOf(args)}`);
    }

    const gone = new Cancellation();
    // the client closing the connection before the answer cancels the call (a cancel frame, say)
    const onClose = () => {
      if (!res.writableFinished) gone.abort();
    };
    res.on('close', onClose);
    const { result, failure } = await callTool(deps, name, args, gone, rateKey(req, deps.config.mcpAuthTokens.length > 0));
    res.off('close', onClose);
    if (gone.aborted) {
      deps.log.debug(`REST call of ${name} cancelled: the client went away`);
      return;
    }
    const status = failure ? STATUS_BY_FAILURE[failure.code] : 200;
    if (failure && status !== 200) {
      return sendError(res, status, failure.code, failure.message, retryAfter(failure));
    }
    sendJson(res, 200, { content: result.content, structuredContent: result.structuredContent, isError: result.isError === true });
  });
}

/** Retry-After of a refused call: busy 1 s, rate_limited the whole seconds until the caller may call again. */
function retryAfter(failure: CallFailure): Record<string, string> {
  if (failure.code === 'busy') return { 'retry-after': '1' };
  if (failure.code === 'rate_limited') return { 'retry-after': String(retryAfterSeconds(failure.retryAfterMs)) };
  return {};
}

export function restRoutes(deps: RestDeps): Record<string, Methods> {
  const listTools: Handler = (_req, res) =>
    sendJson(
      res,
      200,
      deps.tools.list().map(({ name, title, description, inputSchema, outputSchema }) => ({
        name,
        title,
        description,
        inputSchema,
        ...(outputSchema ? { outputSchema } : {}),
      })),
    );
  const listComputers: Handler = (_req, res) => {
    const linked = deps.links.list();
    const { entries, note } = computerList(linked, deps.links.pinned, deps.config.listComputersMaxChars, false);
    // why none can link (a --stdio bridge waiting for its taken link port), or what an answer over
    // MCP_LIST_COMPUTERS_MAX_CHARS left out: list-computers' note, as a header so the body stays the array it always is
    const why = deps.links.unreachable !== null && linked.length === 0 ? deps.links.none('No computers are linked.') : note;
    sendJson(
      res,
      200,
      // what list-computers shows, plus where the computer dialled from
      entries.map((entry, i) => ({ ...entry, remoteAddress: (linked[i] as (typeof linked)[number]).remoteAddress })),
      why === null ? undefined : { [LINK_NOTE_HEADER]: why },
    );
  };
  const getOnly = notAllowed('GET, HEAD');
  return {
    '/tools': { GET: guarded(deps.log, listTools), '*': getOnly },
    '/tools/*': { POST: callHandler(deps), '*': notAllowed('POST') },
    '/computers': { GET: guarded(deps.log, listComputers), '*': getOnly },
  };
}
