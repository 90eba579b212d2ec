// The link listener: WebSocket for computers (any path), plus plain `GET /mcp-computer.lua` so a
// player can `wget` the program from the same address the computer will dial.
import { createServer, type IncomingMessage } from 'node:http';
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket, type RawData } from 'ws';
import type { Logger } from '../log.js';
import { HELLO_OK, encodeHelloError, parseComputerFrame } from './frames.js';
import { describe, type Link, type LinkRegistry } from './registry.js';

export interface LinkServerOptions {
  host: string;
  port: number;
  heartbeatMs: number;
  maxFrameBytes: number;
  /** A socket that has not said hello by then is closed. */
  helloTimeoutMs?: number;
  luaProgramPath: string;
}

export interface LinkServer {
  address: AddressInfo;
  /** Closes every link with 1001 and stops listening. */
  close(): Promise<void>;
}

interface SocketState {
  link: Link | null;
  alive: boolean;
  remoteAddress: string;
  helloTimer: NodeJS.Timeout | null;
}

const CLOSE_POLICY = 1008;
const CLOSE_GOING_AWAY = 1001;

export async function startLinkServer(registry: LinkRegistry, log: Logger, options: LinkServerOptions): Promise<LinkServer> {
  const helloTimeoutMs = options.helloTimeoutMs ?? 10_000;
  // node checks these only every connectionsCheckingInterval (30 s unless set)
  const http = createServer({ headersTimeout: 10_000, requestTimeout: 30_000, connectionsCheckingInterval: 1000 }, (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/mcp-computer.lua') {
      readFile(options.luaProgramPath).then(
        (body) => {
          res.writeHead(200, { 'content-type': 'text/x-lua; charset=utf-8', 'content-length': body.length });
          res.end(body);
        },
        (err: Error) => {
          log.error(`cannot read ${options.luaProgramPath}: ${err.message}`);
          res.writeHead(500, { 'content-type': 'text/plain' }).end('mcp-computer.lua is missing from this bridge install\n');
        },
      );
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('This is the cc-mcp-bridge computer link. Connect with a WebSocket, or GET /mcp-computer.lua.\n');
  });

  // listen before attaching ws: a listen error then rejects here instead of surfacing on the wss
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port, options.host, () => {
      http.off('error', reject);
      resolve();
    });
  });

  const wss = new WebSocketServer({ server: http, maxPayload: options.maxFrameBytes });
  const states = new Map<WebSocket, SocketState>();

  wss.on('connection', (ws: WebSocket, req: IncomingMessage) => {
    const state: SocketState = {
      link: null,
      alive: true,
      remoteAddress: `${req.socket.remoteAddress ?? '?'}:${req.socket.remotePort ?? '?'}`,
      helloTimer: null,
    };
    states.set(ws, state);
    state.helloTimer = setTimeout(() => {
      log.warn(`link from ${state.remoteAddress} sent no hello within ${helloTimeoutMs} ms; closing`);
      ws.close(CLOSE_POLICY, 'no hello');
    }, helloTimeoutMs);

    ws.on('pong', () => {
      state.alive = true;
      if (state.link) registry.touch(state.link);
    });
    ws.on('message', (data: RawData, isBinary: boolean) => onMessage(ws, state, data, isBinary));
    ws.on('error', (err: Error & { code?: string }) => {
      log.warn(`link from ${state.remoteAddress} error: ${err.code ?? ''} ${err.message}`.replace('  ', ' '));
    });
    ws.on('close', (code: number, reason: Buffer) => {
      states.delete(ws);
      if (state.helloTimer) clearTimeout(state.helloTimer);
      const link = state.link;
      if (!link) return;
      const why = `closed ${code}${reason.length ? ` ${reason.toString()}` : ''}`;
      if (registry.unregister(link, why)) log.info(`unlinked ${describe(link.computerId, link.label)}: ${why}`);
    });
  });

  function onMessage(ws: WebSocket, state: SocketState, data: RawData, isBinary: boolean): void {
    if (state.link) registry.touch(state.link);
    if (isBinary) {
      log.warn(`link from ${state.remoteAddress}: binary frame dropped`);
      return;
    }
    const parsed = parseComputerFrame(data.toString());
    if (!parsed.ok) {
      log.warn(`link from ${state.remoteAddress}: ${parsed.error}; frame dropped`);
      if (!state.link && parsed.error.startsWith('hello.')) rejectHello(ws, state, parsed.error);
      return;
    }
    const frame = parsed.frame;
    if (frame.type === 'hello') {
      if (state.link) {
        log.warn(`link ${describe(state.link.computerId, state.link.label)} sent a second hello; ignored`);
        return;
      }
      if (state.helloTimer) clearTimeout(state.helloTimer);
      const { link, replaced } = registry.register(ws, frame, state.remoteAddress);
      state.link = link;
      ws.send(HELLO_OK);
      if (replaced) log.info(`replaced ${describe(replaced.computerId, replaced.label)} from ${replaced.remoteAddress}`);
      log.info(`linked ${describe(link.computerId, link.label)} from ${state.remoteAddress}${link.version ? ` (mcp-computer ${link.version})` : ''}`);
      return;
    }
    if (!state.link) {
      rejectHello(ws, state, 'the first frame must be a hello');
      return;
    }
    if (!registry.resolve(state.link, frame)) {
      log.debug(`link ${describe(state.link.computerId, state.link.label)}: response ${frame.id} matches no request in flight on this link; dropped`);
    }
  }

  function rejectHello(ws: WebSocket, state: SocketState, error: string): void {
    if (state.helloTimer) clearTimeout(state.helloTimer);
    ws.send(encodeHelloError(error));
    ws.close(CLOSE_POLICY, 'invalid hello');
  }

  const heartbeat = setInterval(() => {
    for (const [ws, state] of states) {
      if (!state.alive) {
        log.info(`link from ${state.remoteAddress} missed a heartbeat; terminating`);
        ws.terminate();
        continue;
      }
      state.alive = false;
      ws.ping();
    }
  }, options.heartbeatMs);
  heartbeat.unref();


  return {
    address: http.address() as AddressInfo,
    close: () =>
      new Promise<void>((resolve) => {
        clearInterval(heartbeat);
        for (const [ws, state] of states) {
          // end in-flight requests now so their MCP calls are answered before we exit
          if (state.link) registry.unregister(state.link, 'bridge shutting down');
          state.link = null;
          ws.close(CLOSE_GOING_AWAY, 'bridge shutting down');
        }
        wss.close();
        http.close(() => resolve());
        // sockets that do not finish the closing handshake promptly are cut
        setTimeout(() => {
          for (const ws of states.keys()) ws.terminate();
          http.closeAllConnections();
        }, 1000).unref();
      }),
  };
}

