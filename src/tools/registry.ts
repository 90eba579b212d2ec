// The live set of tools every surface reads. Sources (built-ins, config-defined tools, upstream MCP
// servers) each own a named slice; the registry merges them, keeps names unique and tells
// subscribers when the set changes (stdio's notifications/tools/list_changed, REST, OpenAPI).
import type { Config } from '../config.js';
import type { Tool } from './tool.js';

export interface ToolSource {
  /** Stable id: 'builtin', 'config', 'upstream:<serverId>' ... */
  readonly id: string;
  /** The tools this source offers now, in the order they should be listed. */
  tools(): readonly Tool[];
  /**
   * A tool this source answers for although it does not list it now (an upstream server that is
   * down answers its names with an error saying so); consulted only for names no source lists.
   */
  resolve?(name: string): Tool | undefined;
}

export class ToolNameCollisionError extends Error {
  readonly code = 'ERR_TOOL_NAME_COLLISION';
  constructor(readonly toolName: string, readonly sourceId: string, readonly otherSourceId: string) {
    super(`tool name "${toolName}" of ${sourceId} is already taken by ${otherSourceId}`);
    this.name = 'ToolNameCollisionError';
  }
}

export class ToolRegistry {
  private readonly sources = new Map<string, ToolSource>();
  private readonly listeners = new Set<() => void>();
  /** Streams told once per burst of changes (see watch). */
  private readonly watchers = new Set<() => void>();
  private burstPending = false;
  private changes = 0;
  private byName = new Map<string, { tool: Tool; sourceId: string }>();
  private offered: Tool[] = [];

  constructor(private readonly config: Config) {}

  /**
   * Adds or replaces a source and rebuilds the set. A name clash with another source throws
   * ToolNameCollisionError and leaves the registry exactly as it was.
   */
  setSource(source: ToolSource): void {
    const next = new Map(this.sources);
    next.set(source.id, source);
    this.rebuild(next);
  }

  removeSource(id: string): void {
    if (!this.sources.has(id)) return;
    const next = new Map(this.sources);
    next.delete(id);
    this.rebuild(next);
  }

  /** A source's tools changed (an upstream re-listed, say): rebuild from it again. */
  refresh(id: string): void {
    if (this.sources.has(id)) this.rebuild(new Map(this.sources));
  }

  /** Names that `source` would clash on, without changing anything (for validating a reload). */
  collisions(source: ToolSource): ToolNameCollisionError[] {
    const errors: ToolNameCollisionError[] = [];
    for (const tool of source.tools()) {
      const owner = this.byName.get(tool.name);
      if (owner && owner.sourceId !== source.id) errors.push(new ToolNameCollisionError(tool.name, source.id, owner.sourceId));
    }
    return errors;
  }

  /** The tools offered now: enabled ones, sources in the order they were first added. */
  list(): readonly Tool[] {
    return this.offered;
  }

  /** Any known tool by name, including one the configuration disables (so callers can say so). */
  get(name: string): Tool | undefined {
    const listed = this.byName.get(name)?.tool;
    if (listed) return listed;
    for (const source of this.sources.values()) {
      const tool = source.resolve?.(name);
      if (tool) return tool;
    }
    return undefined;
  }

  /** The id of the source that lists `name`, if any. */
  owner(name: string): string | undefined {
    return this.byName.get(name)?.sourceId;
  }

  /** Every listed name with its source (enabled or not). */
  names(): Array<{ name: string; sourceId: string }> {
    return [...this.byName].map(([name, { sourceId }]) => ({ name, sourceId }));
  }

  isEnabled(tool: Tool): boolean {
    return tool.enabled?.(this.config) ?? true;
  }

  /** Calls `listener` after every change; returns the unsubscribe function. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * The one fan-out of "the tool set changed" to notification streams (2026-07-28 subscriptions,
   * 2025 notification streams): `listener` is called once per burst of changes (a reload may swap
   * several sources in one turn), on the next turn of the event loop. Returns the unwatch function;
   * a stream must call it when it ends, so nothing is told to (or kept for) a stream that is gone.
   */
  watch(listener: () => void): () => void {
    this.watchers.add(listener);
    return () => {
      this.watchers.delete(listener);
    };
  }

  /** How many times the offered tool set changed since start (a 2025 session id carries it: caller-scope.ts). */
  get generation(): number {
    return this.changes;
  }

  /** Streams watching now (each open subscription or stream is one; must drain to 0 as they end). */
  get watching(): number {
    return this.watchers.size;
  }

  private announce(): void {
    if (this.burstPending || this.watchers.size === 0) return;
    this.burstPending = true;
    setImmediate(() => {
      this.burstPending = false;
      // a copy: a watcher may end its own (or another) stream while being told; one ended is not told
      for (const listener of [...this.watchers]) {
        if (!this.watchers.has(listener)) continue;
        try {
          listener();
        } catch (err) {
          // this runs on its own turn: a throw would end the bridge. The watcher is dropped (its
          // stream is broken), the others are still told
          this.watchers.delete(listener);
          process.emitWarning(`a tool list watcher threw and is no longer told of changes: ${(err as Error)?.message ?? String(err)}`, { code: 'CC_TOOL_WATCHER_THREW' });
        }
      }
    });
  }

  private rebuild(sources: Map<string, ToolSource>): void {
    const byName = new Map<string, { tool: Tool; sourceId: string }>();
    for (const source of sources.values()) {
      for (const tool of source.tools()) {
        const owner = byName.get(tool.name);
        if (owner) throw new ToolNameCollisionError(tool.name, source.id, owner.sourceId);
        byName.set(tool.name, { tool, sourceId: source.id });
      }
    }
    const before = this.offered;
    this.sources.clear();
    for (const [id, source] of sources) this.sources.set(id, source);
    this.byName = byName;
    this.offered = [...byName.values()].map((e) => e.tool).filter((t) => this.isEnabled(t));
    const changed = before.length !== this.offered.length || before.some((t, i) => t !== this.offered[i]);
    if (!changed) return;
    this.changes++;
    for (const listener of this.listeners) listener();
    this.announce();
  }
}
