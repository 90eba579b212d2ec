// How an upstream tool is named on the bridge: `<serverId>__<toolName>`, only A-Za-z0-9_- and at
// most 64 characters (several clients refuse dots and slashes). Pure.
//
// - A tool name that already fits is kept as is: `files` + `read_file` -> `files__read_file`.
// - Every other character becomes `-<hex code point>-`: `files.read` -> `files__files-2e-read`,
//   `a/b` -> `a-2f-b`, `é` -> `-e9-`. decodeToolName reverses it.
// - A name still longer than 64 characters is cut and ends in `-` and 8 hex digits of its SHA-256,
//   so it stays unique; the bridge keeps a table from each offered name to the exact upstream name,
//   and calls always reach the upstream with its own name.
import { createHash } from 'node:crypto';

export const MAX_TOOL_NAME = 64;
export const SEPARATOR = '__';

export function encodeToolName(name: string): string {
  let out = '';
  for (const ch of name) out += /^[A-Za-z0-9_-]$/.test(ch) ? ch : `-${(ch.codePointAt(0) as number).toString(16)}-`;
  return out;
}

/**
 * Undoes encodeToolName for a name that needed escapes (each `-<hex>-` run stands for one
 * character). A name that fitted as it was is its own original; the bridge's table knows which.
 */
export function decodeToolName(encoded: string): string {
  return encoded.replace(/-([0-9a-f]{1,6})-/g, (run, hex: string) => {
    const cp = parseInt(hex, 16);
    return cp <= 0x10ffff ? String.fromCodePoint(cp) : run;
  });
}

export function bridgeToolName(serverId: string, toolName: string): string {
  const full = `${serverId}${SEPARATOR}${encodeToolName(toolName)}`;
  if (full.length <= MAX_TOOL_NAME) return full;
  const hash = createHash('sha256').update(toolName).digest('hex').slice(0, 8);
  return `${full.slice(0, MAX_TOOL_NAME - 9)}-${hash}`;
}
