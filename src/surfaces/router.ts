// A route table small enough to read at once: exact paths, and prefixes written `/tools/*` whose
// remainder is handed to the handler. HEAD is served by GET unless a route says otherwise.
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface RouteContext {
  /** The path without the query string. */
  path: string;
  /** The query string parameters. */
  query: URLSearchParams;
  /** For prefix routes: what follows the prefix (`/tools/*` on `/tools/a` gives `a`). */
  rest: string;
  /** False only on a public route (/health ...) reached without the MCP token; the listener sets it. */
  authenticated: boolean;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, ctx: RouteContext) => void | Promise<void>;

/** Handlers by HTTP method; `'*'` answers any method the route does not list (a custom 405, say). */
export type Methods = Partial<Record<string, Handler>>;

export type Match =
  | { kind: 'found'; handler: Handler; ctx: RouteContext }
  | { kind: 'method-not-allowed'; allow: string; ctx: RouteContext }
  | { kind: 'not-found'; ctx: RouteContext };

export class Router {
  private readonly exact = new Map<string, Methods>();
  private readonly prefixes: Array<{ prefix: string; methods: Methods }> = [];

  /** Adds a route; a path ending in `/*` matches everything under it. Adding a path twice throws. */
  add(path: string, methods: Methods): this {
    if (this.has(path)) throw new Error(`route ${path} is already taken`);
    if (path.endsWith('/*')) this.prefixes.push({ prefix: path.slice(0, -1), methods });
    else this.exact.set(path, methods);
    return this;
  }

  /** Removes the route added with exactly this path (config aliases on reload); whether there was one. */
  remove(path: string): boolean {
    if (!path.endsWith('/*')) return this.exact.delete(path);
    const i = this.prefixes.findIndex((p) => p.prefix === path.slice(0, -1));
    if (i !== -1) this.prefixes.splice(i, 1);
    return i !== -1;
  }

  /** Whether `path` is taken exactly, or falls under a prefix route. */
  has(path: string): boolean {
    if (!path.endsWith('/*')) return this.exact.has(path) || this.prefixes.some((p) => path.startsWith(p.prefix));
    const prefix = path.slice(0, -1);
    const overlaps = (other: string) => other.startsWith(prefix) || prefix.startsWith(other);
    return [...this.exact.keys()].some((p) => p.startsWith(prefix)) || this.prefixes.some((p) => overlaps(p.prefix));
  }

  match(method: string, url: string): Match {
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const ctx: RouteContext = new Context(path, q === -1 ? '' : url.slice(q + 1));
    let methods = this.exact.get(path);
    if (!methods) {
      const hit = this.prefixes.find((p) => path.startsWith(p.prefix));
      if (!hit) return { kind: 'not-found', ctx };
      methods = hit.methods;
      ctx.rest = path.slice(hit.prefix.length);
    }
    const handler = methods[method] ?? (method === 'HEAD' ? methods.GET : undefined) ?? methods['*'];
    if (handler) return { kind: 'found', handler, ctx };
    const allow = Object.keys(methods).filter((m) => m !== '*');
    if (allow.includes('GET') && !allow.includes('HEAD')) allow.push('HEAD');
    return { kind: 'method-not-allowed', allow: allow.join(', '), ctx };
  }
}

/** A RouteContext whose query string is parsed only when a handler asks for it (most never do). */
class Context implements RouteContext {
  rest = '';
  authenticated = true;
  private parsed: URLSearchParams | null = null;

  constructor(
    readonly path: string,
    private readonly search: string,
  ) {}

  get query(): URLSearchParams {
    return (this.parsed ??= new URLSearchParams(this.search));
  }
}
