// What a reload changes: pure comparison of two validated config files by name / id.
import { canonical } from '../jsonrpc/canonical.js';
import type { FileConfig } from './file.js';

export { canonical };

export interface Changes {
  added: string[];
  removed: string[];
  changed: string[];
}

export interface ConfigDiff {
  tools: Changes;
  servers: Changes;
  endpoints: Changes;
  /** Whether anything at all differs. */
  any: boolean;
}

function compare<T>(before: readonly T[], after: readonly T[], keyOf: (item: T) => string): Changes {
  const old = new Map(before.map((item) => [keyOf(item), canonical(item)]));
  const next = new Map(after.map((item) => [keyOf(item), canonical(item)]));
  return {
    added: [...next.keys()].filter((k) => !old.has(k)),
    removed: [...old.keys()].filter((k) => !next.has(k)),
    changed: [...next.keys()].filter((k) => old.has(k) && old.get(k) !== next.get(k)),
  };
}

export function diffConfig(before: FileConfig, after: FileConfig): ConfigDiff {
  const tools = compare(before.tools, after.tools, (t) => t.name);
  const servers = compare(before.servers, after.servers, (s) => s.id);
  const endpoints = compare(before.endpoints, after.endpoints, (e) => `${e.path} -> ${e.tool}`);
  const any = [tools, servers, endpoints].some((c) => c.added.length + c.removed.length + c.changed.length > 0);
  return { tools, servers, endpoints, any };
}
