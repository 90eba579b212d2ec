// Applies the CC_CONFIG file to the live tool registry: the config tool source now, upstream
// servers and reload as they land. Reading and validating stay in file.ts; this is the I/O shell.
import type { Logger } from '../log.js';
import { CONFIG_SOURCE_ID, configToolSource } from '../tools/config-tools.js';
import type { ToolRegistry } from '../tools/registry.js';
import { UpstreamServer, sourceIdOf, type ServerStatus } from '../upstream/server.js';
import { SEPARATOR } from '../upstream/names.js';
import { diffConfig, type ConfigDiff } from './diff.js';
import { ConfigFileError, EMPTY_FILE_CONFIG, loadFileConfig, type FileConfig, type Problem, type ServerConfig } from './file.js';

export interface UpstreamSettings {
  timeoutMs: number;
  maxMessageBytes: number;
  version: string;
  /** Deepest nesting of an upstream message (CC_UPSTREAM_MAX_JSON_DEPTH); 64 when absent. */
  maxJsonDepth?: number;
  /** Least ms from one tools/list of a server to the next on its list_changed (CC_UPSTREAM_RELIST_MS); 1000 when absent. */
  relistMs?: number;
}

/** What POST /reload and SIGHUP report. */
export type ReloadResult =
  | { ok: true; changed: boolean; summary: string; tools: ConfigDiff['tools']; servers: ConfigDiff['servers']; endpoints: ConfigDiff['endpoints'] }
  | { ok: false; error: string; problems: Problem[] };

/** The REST aliases (src/surfaces/endpoints.ts), attached once the routes exist. */
export interface EndpointTable {
  check(endpoints: unknown): Problem[];
  apply(endpoints: unknown): void;
}

export class ConfigHub {
  private current: FileConfig = EMPTY_FILE_CONFIG;
  private endpoints: EndpointTable | null = null;
  private readonly servers = new Map<string, UpstreamServer>();
  /** Servers replaced or removed by a reload that still finish their calls in flight. */
  private readonly retiring = new Map<UpstreamServer, Promise<void>>();
  private closed = false;

  constructor(
    readonly file: string,
    private readonly tools: ToolRegistry,
    private readonly log: Logger,
    private readonly upstream: UpstreamSettings = { timeoutMs: 60_000, maxMessageBytes: 4 * 1024 * 1024, version: '0' },
  ) {}

  /** Each upstream server's state, in file order. */
  serverStatus(): ServerStatus[] {
    return this.current.servers.map((s) => this.servers.get(s.id)?.status()).filter((s): s is ServerStatus => s !== undefined);
  }

  /** Re-reads the file; a bad file changes nothing. Never throws for anything in the file. */
  reload(): ReloadResult {
    let next: FileConfig;
    try {
      next = this.read();
    } catch (err) {
      if (!(err instanceof ConfigFileError)) throw err;
      this.log.error(`config reload refused; nothing changed:\n${err.message}`);
      return { ok: false, error: err.message, problems: err.problems };
    }
    const diff = this.apply(next);
    const { tools, servers, endpoints } = diff;
    return { ok: true, changed: diff.any, summary: summary(diff), tools, servers, endpoints };
  }

  /** Stops every upstream server (stdio: stdin closed, SIGTERM after 2 s, SIGKILL after 5 s). */
  async close(): Promise<void> {
    this.closed = true;
    // retired servers still finishing their calls in flight stop waiting for them too: those calls are
    // answered now (the bridge is shutting down), not cut off with their connection at the grace's end
    const stopping = [...this.servers.values(), ...this.retiring.keys()].map((s) => s.stop(0, 'the bridge is shutting down'));
    this.servers.clear();
    await Promise.all([...stopping, ...this.retiring.values()]);
  }

  private startServer(config: ServerConfig): void {
    const server = new UpstreamServer(config, {
      log: this.log,
      timeoutMs: this.upstream.timeoutMs,
      maxMessageBytes: this.upstream.maxMessageBytes,
      version: this.upstream.version,
      ...(this.upstream.maxJsonDepth !== undefined ? { maxJsonDepth: this.upstream.maxJsonDepth } : {}),
      ...(this.upstream.relistMs !== undefined ? { relistMs: this.upstream.relistMs } : {}),
      onChange: () => {
        // a server stopped by a reload may report after its successor took its slot
        if (this.servers.get(config.id) !== server) return;
        try {
          this.tools.refresh(server.source.id);
        } catch (err) {
          this.log.error(`upstream ${config.id}: its tools are not offered: ${(err as Error).message}`);
        }
      },
    });
    this.servers.set(config.id, server);
    this.tools.setSource(server.source);
    server.start();
  }

  private retire(id: string, why: string): void {
    const server = this.servers.get(id);
    if (!server) return;
    this.servers.delete(id);
    // its calls in flight finish on the definitions they started with
    const done = server.stop(this.upstream.timeoutMs, why).finally(() => this.retiring.delete(server));
    this.retiring.set(server, done);
  }

  get config(): FileConfig {
    return this.current;
  }

  /** Reads, validates and checks the file against the other tool sources; throws ConfigFileError. */
  read(): FileConfig {
    const next = loadFileConfig(this.file);
    const source = configToolSource(next.tools);
    const problems: Problem[] = this.tools.collisions(source).map((c) => ({
      path: `$.tools[${next.tools.findIndex((t) => t.name === c.toolName)}].name`,
      message: `tool name ${JSON.stringify(c.toolName)} is already taken by ${c.otherSourceId}`,
    }));
    // a server's names (`<id>__...`) must not reach into another source's tools
    next.servers.forEach((server, i) => {
      const taken = this.tools.names().find((n) => n.name.startsWith(`${server.id}${SEPARATOR}`) && n.sourceId !== CONFIG_SOURCE_ID && !n.sourceId.startsWith('upstream:'));
      if (taken) problems.push({ path: `$.servers[${i}].id`, message: `tools of server "${server.id}" would be named like ${JSON.stringify(taken.name)} of ${taken.sourceId}` });
    });
    if (this.endpoints) problems.push(...this.endpoints.check(next.endpoints));
    if (problems.length) throw new ConfigFileError(this.file, problems);
    return next;
  }

  /** Serves the file's `endpoints` from `table` from now on; throws ConfigFileError on a route clash. */
  attachEndpoints(table: EndpointTable): void {
    const problems = table.check(this.current.endpoints);
    if (problems.length) throw new ConfigFileError(this.file, problems);
    table.apply(this.current.endpoints);
    this.endpoints = table;
  }

  /** Applies a validated file as a diff against the current one. */
  apply(next: FileConfig): ConfigDiff {
    const diff = diffConfig(this.current, next);
    if (diff.tools.added.length + diff.tools.removed.length + diff.tools.changed.length > 0) {
      if (next.tools.length) this.tools.setSource(configToolSource(next.tools));
      else this.tools.removeSource(CONFIG_SOURCE_ID);
    }
    if (!this.closed) {
      for (const id of diff.servers.removed) this.retire(id, 'removed from the config file');
      for (const id of diff.servers.changed) this.retire(id, 'changed in the config file; restarting');
      for (const id of diff.servers.removed) this.tools.removeSource(sourceIdOf(id));
      for (const server of next.servers) {
        if (diff.servers.added.includes(server.id) || diff.servers.changed.includes(server.id)) this.startServer(server);
      }
    }
    if (diff.endpoints.added.length + diff.endpoints.removed.length + diff.endpoints.changed.length > 0) {
      this.endpoints?.apply(next.endpoints);
    }
    this.current = next;
    if (diff.any) this.log.info(`config ${this.file}: ${summary(diff)}`);
    return diff;
  }
}

export function summary(diff: ConfigDiff): string {
  const parts: string[] = [];
  for (const [what, changes] of [['tools', diff.tools], ['servers', diff.servers], ['endpoints', diff.endpoints]] as const) {
    for (const [verb, names] of [['added', changes.added], ['removed', changes.removed], ['changed', changes.changed]] as const) {
      if (names.length) parts.push(`${what} ${verb}: ${names.join(', ')}`);
    }
  }
  return parts.length ? parts.join('; ') : 'nothing changed';
}
