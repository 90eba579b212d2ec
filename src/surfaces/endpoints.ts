// Config-defined REST aliases: `endpoints: [{"path": "/refuel", "tool": "turtle-refuel"}]` in the
// CC_CONFIG file. The config loader calls check() while validating a file and apply() when it
// takes effect (start and every reload); a set is applied all at once or not at all.
import type { Methods, Router } from './router.js';

export interface EndpointAlias {
  path: string;
  tool: string;
}

/** One thing wrong with an entry: its JSON path in the config file (`$.endpoints[0].path`) and what. */
export interface EndpointProblem {
  path: string;
  message: string;
}

export class EndpointConfigError extends Error {
  readonly code = 'ERR_ENDPOINT_CONFIG';
  constructor(readonly problems: EndpointProblem[]) {
    super(problems.map((p) => `${p.path}: ${p.message}`).join('; '));
    this.name = 'EndpointConfigError';
  }
}

const PATH = /^\/[A-Za-z0-9._~!$&'()+,;=:@%/-]*$/;
const MAX_PATH_LENGTH = 200;

export class EndpointAliases {
  private current: EndpointAlias[] = [];

  /** `route(tool)` builds the methods an alias to `tool` serves. */
  constructor(
    private readonly router: Router,
    private readonly route: (tool: string) => Methods,
  ) {}

  /** The aliases in effect, in config order. */
  list(): readonly EndpointAlias[] {
    return this.current;
  }

  /**
   * What is wrong with `value` (the config's `endpoints`; undefined means none), one sentence per
   * problem; empty when apply() would take it. Changes nothing.
   */
  check(value: unknown): EndpointProblem[] {
    return this.parse(value).problems;
  }

  /** Replaces every alias with `value`'s, or throws EndpointConfigError and keeps the old ones. */
  apply(value: unknown): void {
    const { aliases, problems } = this.parse(value);
    if (problems.length) throw new EndpointConfigError(problems);
    for (const alias of this.current) this.router.remove(alias.path);
    for (const alias of aliases) this.router.add(alias.path, this.route(alias.tool));
    this.current = aliases;
  }

  private parse(value: unknown): { aliases: EndpointAlias[]; problems: EndpointProblem[] } {
    if (value === undefined || value === null) return { aliases: [], problems: [] };
    if (!Array.isArray(value)) return { aliases: [], problems: [{ path: '$.endpoints', message: 'must be an array of {"path", "tool"} objects' }] };
    const ours = new Set(this.current.map((a) => a.path));
    const seen = new Set<string>();
    const aliases: EndpointAlias[] = [];
    const problems: EndpointProblem[] = [];
    value.forEach((entry: unknown, i) => {
      const at = `$.endpoints[${i}]`;
      const problem = (path: string, message: string) => problems.push({ path, message });
      if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
        problem(at, 'must be an object with "path" and "tool"');
        return;
      }
      const { path, tool, ...extra } = entry as Record<string, unknown>;
      const before = problems.length;
      for (const key of Object.keys(extra)) problem(`${at}.${key}`, 'unknown key; expected "path" and "tool"');
      if (typeof tool !== 'string' || tool === '') problem(`${at}.tool`, 'must be a tool name');
      if (typeof path !== 'string' || !PATH.test(path) || path.length > MAX_PATH_LENGTH) {
        problem(`${at}.path`, `must be a URL path such as "/refuel" (no query, no "*", at most ${MAX_PATH_LENGTH} characters)`);
      } else if (seen.has(path)) {
        problem(`${at}.path`, `${JSON.stringify(path)} is listed twice`);
      } else if (!ours.has(path) && this.router.has(path)) {
        problem(`${at}.path`, `${JSON.stringify(path)} collides with a built-in route`);
      }
      if (problems.length > before) return;
      seen.add(path as string);
      aliases.push({ path: path as string, tool: tool as string });
    });
    return { aliases, problems };
  }
}
