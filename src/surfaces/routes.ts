// The bridge's HTTP routes in one table: add a surface's routes here.
import type { Config } from '../config.js';
import type { ConfigHub } from '../config/hub.js';
import type { LinkRegistry } from '../link/registry.js';
import type { LinkListenerStatus } from '../link/port-holder.js';
import type { Logger } from '../log.js';
import type { Dispatcher } from '../mcp/dispatch.js';
import type { ToolRegistry } from '../tools/registry.js';
import { EndpointAliases } from './endpoints.js';
import { mcpRoute } from './mcp-route.js';
import type { EventStreams } from './event-streams.js';
import type { getStream } from './get-stream.js';
import { sendJson } from './respond.js';
import { callHandler, notAllowed, restRoutes } from './rest.js';
import { reloadRoute } from './reload-route.js';
import { pinsRoutes } from './pins-route.js';
import type { KeyPins } from '../link/pins.js';
import { Router } from './router.js';
import { PUBLIC_METRICS, type Metrics } from '../metrics.js';
import type { CallRate } from '../tools/call-rate.js';

export interface RouteDeps {
  dispatcher: Dispatcher;
  log: Logger;
  maxBodyBytes: number;
  computers: () => number;
  /** The link listener's state in /health (listening, or waiting for its port in --stdio). */
  linkStatus?: () => LinkListenerStatus;
  tools: ToolRegistry;
  links: LinkRegistry;
  config: Config;
  version: string;
  metrics?: Metrics;
  /** Tool calls per caller per second (MCP_CALL_RATE), the dispatcher's: REST calls count against it too. */
  rate?: CallRate;
  /** The CC_CONFIG file (POST /reload, server states in /health); null without one. */
  hub?: ConfigHub | null;
  /** The open GET /mcp event streams (MCP_MAX_GET_STREAMS); without them GET /mcp is 405. */
  streams?: EventStreams;
  /** The pin table (GET /pins, POST /pins/<id>/reset); undefined with CC_LINK_PIN=off. */
  pins?: KeyPins | undefined;
  /** The SSE answers of 2026-07-28 subscriptions/listen (MCP_MAX_SUBSCRIPTIONS is checked before). */
  listenStreams?: EventStreams;
}

export interface BridgeRoutes {
  router: Router;
  /** REST aliases from the config file's `endpoints`. */
  endpoints: EndpointAliases;
}

export function bridgeRoutes(deps: RouteDeps): BridgeRoutes {
  const mcp = mcpRoute(deps.dispatcher, deps.log, {
    maxBodyBytes: deps.maxBodyBytes,
    ...(deps.listenStreams ? { listenStreams: deps.listenStreams } : {}),
    listChanged: deps.streams !== undefined,
    tokens: deps.config.mcpAuthTokens.length > 0,
    toolsGeneration: () => deps.tools.generation,
  });
  const streams = deps.streams;
  if (streams) {
    // GET /mcp (the 2025 revisions' event stream): its module is loaded at the first GET, not at start
    // one handler for every GET: its SessionStreams keeps the per-session limit and the one notice per
    // change, so GETs that come while the module loads wait for the same one (before, each made its own)
    let get: ReturnType<typeof getStream> | undefined;
    let loading: Promise<ReturnType<typeof getStream>> | undefined;
    mcp.GET = async (req, res, ctx) => {
      if (get === undefined) {
        loading ??= import('./get-stream.js').then((m) =>
          m.getStream({
            streams,
            watchTools: (listener) => deps.tools.watch(listener),
            toolsGeneration: () => deps.tools.generation,
            log: deps.log,
            perSession: deps.config.maxGetStreamsPerSession,
            perClient: deps.config.maxGetStreamsPerClient,
            tokens: deps.config.mcpAuthTokens.length > 0,
          }),
        );
        get = await loading;
      }
      return get(req, res, ctx);
    };
  }
  const router = new Router()
    .add('/mcp', mcp)
    .add('/', mcp)
    .add('/metrics', {
      // without the MCP token (when one is set) it says only that the bridge is up
      GET: (_req, res, ctx) => {
        const text = ctx.authenticated && deps.metrics ? deps.metrics.render() : PUBLIC_METRICS;
        res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8', 'content-length': Buffer.byteLength(text) });
        res.end(text);
      },
    })
    .add('/health', {
      // without the MCP token (when one is set) it says only that the bridge is up
      GET: (_req, res, ctx) =>
        sendJson(
          res,
          200,
          ctx.authenticated ? { ok: true, computers: deps.computers(), ...(deps.linkStatus ? { link: deps.linkStatus() } : {}), ...(deps.hub ? { servers: deps.hub.serverStatus() } : {}) } : { ok: true },
        ),
    })
    .add('/reload', reloadRoute(deps.hub ?? null));
  for (const [path, methods] of Object.entries(restRoutes(deps))) router.add(path, methods);
  for (const [path, methods] of Object.entries(pinsRoutes({ pins: deps.pins, links: deps.links, log: deps.log }))) router.add(path, methods);
  const endpoints = new EndpointAliases(router, (tool) => ({ POST: callHandler(deps, tool), '*': notAllowed('POST') }));
  router.add('/openapi.json', {
    // the document is built per request, and its module loaded at the first one
    GET: async (req, res) => {
      const { openApiDocument } = await import('./openapi.js');
      const host = req.headers.host;
      const serverUrl = host ? `http://${host}` : undefined;
      sendJson(res, 200, openApiDocument(deps.tools.list(), endpoints.list(), { version: deps.version, ...(serverUrl ? { serverUrl } : {}) }));
    },
    '*': notAllowed('GET, HEAD'),
  });
  return { router, endpoints };
}
