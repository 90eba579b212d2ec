// The CC_CONFIG file: JSON naming config-defined Lua tools, upstream MCP servers and (for the REST
// surface) endpoints. This module reads it (a regular file only) and parses its JSON text (bounded
// depth, a syntax error with its line and column); file-check.ts checks the value, file-shape.ts
// says what it holds. Every problem names the file, the JSON path and what is wrong.
import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs';
import { boundsProblem } from '../jsonrpc/bounds.js';
import { parseFileConfig } from './file-check.js';
import { ConfigFileError, type FileConfig } from './file-shape.js';

export * from './file-shape.js';
export { parseFileConfig } from './file-check.js';

/**
 * Deepest nesting of arrays/objects in the file, checked before anything walks it. A schema nests at
 * most MAX_SCHEMA_DEPTH (32) sub-schemas, two levels each, so a real file stays far below; a deeper
 * one (an `annotations` or `default` value thousands of levels deep) overflowed the stack in the
 * recursive walks after parsing: a crash at start or on SIGHUP, a 500 on POST /reload.
 */
export const MAX_FILE_JSON_DEPTH = 256;
/** Parses JSON text; a syntax error names the line and column. */
export function parseFileConfigText(text: string, file: string): FileConfig {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    // V8 quotes the text in some messages; keep one line
    const reason = (err as Error).message.replace(/, "[\s\S]*" is not valid JSON$/, '').replace(/\s+/g, ' ');
    throw new ConfigFileError(file, [{ path: '$', message: `not valid JSON: ${reason}${lineColumn(text, err as Error)}` }]);
  }
  const tooDeep = boundsProblem(value, { maxDepth: MAX_FILE_JSON_DEPTH });
  if (tooDeep !== null) throw new ConfigFileError(file, [{ path: '$', message: `${tooDeep} (a config file nests at most ${MAX_FILE_JSON_DEPTH})` }]);
  return parseFileConfig(value, file);
}

function lineColumn(text: string, err: Error): string {
  const at = /position (\d+)/.exec(err.message);
  if (!at || /line \d+/.test(err.message)) return '';
  const before = text.slice(0, Number(at[1]));
  const line = before.split('\n').length;
  return ` (line ${line}, column ${before.length - before.lastIndexOf('\n')})`;
}

/**
 * Largest config file read (a fixed bound: Lua tools and server entries are a few KB each). Before, a
 * 3 GB file was read whole by the start, or on SIGHUP / POST /reload with the event loop blocked: 65 s
 * and 4.2 GB of memory to fail with ERR_STRING_TOO_LONG.
 */
export const MAX_FILE_BYTES = 16 * 1024 * 1024;

/**
 * Reads and validates the file; an unreadable file is a ConfigFileError too. Only a regular file (a
 * symlink to one is fine) is read: opened without blocking and checked on the open descriptor, so a
 * FIFO or a device put at the path is refused at once. Before, a FIFO blocked the start, or, on
 * SIGHUP or POST /reload, the whole event loop (every link and call) until something wrote to it,
 * and /dev/zero was read until memory ran out.
 */
export function loadFileConfig(file: string): FileConfig {
  let text: string;
  let fd: number | null = null;
  try {
    fd = openSync(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new ConfigFileError(file, [{ path: '$', message: 'is not a regular file (a FIFO, device or directory is never read)' }]);
    if (stat.size > MAX_FILE_BYTES) throw new ConfigFileError(file, [{ path: '$', message: `is ${stat.size} bytes; a config file may be at most ${MAX_FILE_BYTES} (16 MiB), so it is not read` }]);
    text = readFileSync(fd, 'utf8');
  } catch (err) {
    if (err instanceof ConfigFileError) throw err;
    const e = err as NodeJS.ErrnoException;
    throw new ConfigFileError(file, [{ path: '$', message: `cannot read the file: ${e.code ?? e.message}` }]);
  } finally {
    if (fd !== null) closeSync(fd);
  }
  return parseFileConfigText(text, file);
}
