// The bridge's HTTP routes in one table: add a surface's routes here.
import type { Logger } from '../log.js';
import type { Dispatcher } from '../mcp/dispatch.js';
import { mcpRoute } from './mcp-route.js';
import { sendJson } from './respond.js';
import { Router } from './router.js';

export interface RouteDeps {
  dispatcher: Dispatcher;
  log: Logger;
  maxBodyBytes: number;
  computers: () => number;
}

export function bridgeRoutes(deps: RouteDeps): Router {
  const mcp = mcpRoute(deps.dispatcher, deps.log, { maxBodyBytes: deps.maxBodyBytes });
  return new Router()
    .add('/mcp', mcp)
    .add('/', mcp)
    .add('/health', {
      // without the MCP token (when one is set) it says only that the bridge is up
      GET: (_req, res, ctx) => sendJson(res, 200, ctx.authenticated ? { ok: true, computers: deps.computers() } : { ok: true }),
    });
}
