// Wires the registry, the link listener and the MCP listener together. Used by the process entry,
// the tests and the benchmark alike.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Config } from './config.js';
import { Registry } from './link/registry.js';
import { startLinkServer, type LinkServer } from './link/server.js';
import { createLogger, type Logger } from './log.js';
import { Dispatcher } from './mcp/dispatch.js';
import { startMcpServer } from './mcp/http.js';

export const LUA_PROGRAM_PATH = fileURLToPath(new URL('../lua/mcp-computer.lua', import.meta.url));

export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

export interface Bridge {
  mcpUrl: string;
  linkUrl: string;
  registry: Registry;
  dispatcher: Dispatcher;
  /** Stop accepting, end links with 1001, let in-flight MCP calls answer; resolves when closed. */
  close(graceMs?: number): Promise<void>;
}

function urlHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

export async function startBridge(config: Config, log: Logger = createLogger(config.logLevel)): Promise<Bridge> {
  const registry = new Registry();
  const dispatcher = new Dispatcher({ registry, config, log, serverVersion: packageVersion() });
  const link: LinkServer = await startLinkServer(registry, log, {
    host: config.linkHost,
    port: config.linkPort,
    heartbeatMs: config.heartbeatMs,
    maxFrameBytes: config.maxFrameBytes,
    luaProgramPath: LUA_PROGRAM_PATH,
  });
  let mcp;
  try {
    mcp = await startMcpServer(dispatcher, log, {
      host: config.mcpHost,
      port: config.mcpPort,
      maxBodyBytes: config.maxBodyBytes,
      allowedOrigins: config.allowedOrigins,
      computers: () => registry.size,
    });
  } catch (err) {
    await link.close();
    throw err;
  }
  let closing: Promise<void> | null = null;
  return {
    mcpUrl: `http://${urlHost(config.mcpHost)}:${mcp.address.port}/mcp`,
    linkUrl: `ws://${urlHost(config.linkHost)}:${link.address.port}`,
    registry,
    dispatcher,
    close(graceMs = 4000) {
      closing ??= Promise.all([mcp.close(graceMs), link.close()]).then(() => undefined);
      return closing;
    },
  };
}
