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
    .add('/health', { GET: (_req, res) => sendJson(res, 200, { ok: true, computers: deps.computers() }) });
}
