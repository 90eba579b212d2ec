// Applies the CC_CONFIG file to the live tool registry: the config tool source now, upstream
// servers and reload as they land. Reading and validating stay in file.ts; this is the I/O shell.
import type { Logger } from '../log.js';
import { CONFIG_SOURCE_ID, configToolSource } from '../tools/config-tools.js';
import type { ToolRegistry } from '../tools/registry.js';
import { diffConfig, type ConfigDiff } from './diff.js';
import { ConfigFileError, EMPTY_FILE_CONFIG, loadFileConfig, type FileConfig, type Problem } from './file.js';

/** The REST aliases (src/surfaces/endpoints.ts), attached once the routes exist. */
export interface EndpointTable {
  check(endpoints: unknown): Problem[];
  apply(endpoints: unknown): void;
}

export class ConfigHub {
  private current: FileConfig = EMPTY_FILE_CONFIG;
  private endpoints: EndpointTable | null = null;

  constructor(
    readonly file: string,
    private readonly tools: ToolRegistry,
    private readonly log: Logger,
  ) {}

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
