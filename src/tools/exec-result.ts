// What a computer answers to exec-lua (and to the other tools that return Lua values): checking that
// answer before anything renders it, showing its values as Lua (byte strings as Lua literals), and
// the tool result made from it.
import { isRecord } from '../jsonrpc/message.js';
import { aJsonType, boundsProblem } from '../jsonrpc/bounds.js';
import { isPlainText, written } from '../jsonrpc/written.js';
import type { ToolResult } from './tool.js';

export interface ExecOutcome {
  computerId: number;
  ok: boolean;
  output: string;
  returns: unknown[];
  truncated: boolean;
  error?: string;
}

/** Length of the well-formed UTF-8 sequence (RFC 3629) starting at i, or 0. */
function utf8Length(b: Buffer, i: number): number {
  const lead = b[i] as number;
  const cont = (k: number, lo = 0x80, hi = 0xbf) => i + k < b.length && (b[i + k] as number) >= lo && (b[i + k] as number) <= hi;
  if (lead >= 0xc2 && lead <= 0xdf) return cont(1) ? 2 : 0;
  if (lead >= 0xe0 && lead <= 0xef) {
    const ok = cont(1, lead === 0xe0 ? 0xa0 : 0x80, lead === 0xed ? 0x9f : 0xbf) && cont(2);
    return ok ? 3 : 0;
  }
  if (lead >= 0xf0 && lead <= 0xf4) {
    const ok = cont(1, lead === 0xf0 ? 0x90 : 0x80, lead === 0xf4 ? 0x8f : 0xbf) && cont(2) && cont(3);
    return ok ? 4 : 0;
  }
  return 0;
}

const LUA_ESCAPES: Record<number, string> = { 0x0a: '\\n', 0x09: '\\t', 0x0d: '\\r', 0x22: '\\"', 0x5c: '\\\\' };

/**
 * A byte string (a `base64` descriptor: not valid UTF-8 on the computer) as a Lua string literal:
 * printable ASCII and well-formed UTF-8 as they are, every other byte as a three-digit `\ddd`.
 */
export function luaByteLiteral(base64: string): string {
  const b = Buffer.from(base64, 'base64');
  let out = '"';
  for (let i = 0; i < b.length; ) {
    const byte = b[i] as number;
    const escape = LUA_ESCAPES[byte];
    if (escape !== undefined) {
      out += escape;
      i += 1;
    } else if (byte >= 0x20 && byte < 0x7f) {
      out += String.fromCharCode(byte);
      i += 1;
    } else {
      const len = byte >= 0x80 ? utf8Length(b, i) : 0;
      if (len > 0) {
        out += b.toString('utf8', i, i + len);
        i += len;
      } else {
        out += `\\${String(byte).padStart(3, '0')}`;
        i += 1;
      }
    }
  }
  return `${out}"`;
}

export function renderValue(descriptor: unknown): string {
  if (!isRecord(descriptor)) return JSON.stringify(descriptor);
  if (typeof descriptor.repr === 'string') return descriptor.repr;
  if (typeof descriptor.base64 === 'string') return luaByteLiteral(descriptor.base64);
  switch (descriptor.type) {
    case 'nil':
      return 'nil';
    case 'string':
      return JSON.stringify(descriptor.value);
    default:
      return JSON.stringify(descriptor.value ?? null);
  }
}

const NOTHING = '(no output, nothing returned)';
const TRUNCATED = '[output or returned values were truncated to fit the link message limit]';

/** The result's text: the output (less one trailing newline), `=> values` or `error: ...`, and the truncation note, one per line. */
function render(outcome: ExecOutcome): string {
  const output = outcome.output;
  let text = output.endsWith('\n') ? output.slice(0, -1) : output;
  const shown = output !== '';
  if (outcome.ok) {
    if (outcome.returns.length > 0) text = `${shown ? `${text}\n` : ''}=> ${outcome.returns.map(renderValue).join(', ')}`;
    else if (!shown) text = NOTHING;
  } else {
    text = `${shown ? `${text}\n` : ''}error: ${outcome.error}`;
  }
  return outcome.truncated ? `${text}\n${TRUNCATED}` : text;
}

const DESCRIPTOR_TYPES: ReadonlySet<unknown> = new Set(['nil', 'boolean', 'number', 'string', 'table', 'function', 'thread', 'userdata']);
/** Most levels `returns` may nest: mcp-computer's list, descriptor and tables at most 17 deep stay well inside. */
export const MAX_RESULT_DEPTH = 32;

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * A table descriptor's `bytes`: the strings of its copy (values and keys) that are not valid UTF-8,
 * each `{path, base64, key?, truncated?}`; `path` holds object keys and 0-based array positions.
 */
function bytesProblem(type: unknown, bytes: unknown): string | null {
  if (type !== 'table') return ' is only for a table';
  if (!Array.isArray(bytes)) return ` is ${aJsonType(bytes)}, not an array`;
  for (let i = 0; i < bytes.length; i++) {
    const e: unknown = bytes[i];
    if (!isRecord(e)) return `[${i}] is ${aJsonType(e)}, not an object`;
    if (!Array.isArray(e.path) || !e.path.every((k) => typeof k === 'string' || (Number.isInteger(k) && (k as number) >= 0))) {
      return `[${i}].path is not a list of keys and array positions`;
    }
    if (e.base64 === undefined) return `[${i}].base64 is missing`;
    if (typeof e.base64 !== 'string' || !BASE64.test(e.base64)) return `[${i}].base64 is ${typeof e.base64 === 'string' ? 'not base64 text' : aJsonType(e.base64)}`;
    if (e.key !== undefined && e.key !== true) return `[${i}].key is ${aJsonType(e.key)}, not true`;
    if (e.key === true && e.path.length === 0) return `[${i}] is a key with an empty path`;
    if (e.truncated !== undefined && typeof e.truncated !== 'boolean') return `[${i}].truncated is ${aJsonType(e.truncated)}, not a boolean`;
  }
  return null;
}

type ResultParse = { ok: true; value: Pick<ExecOutcome, 'output' | 'returns' | 'truncated'> } | { ok: false; problem: string };

/**
 * Checks an exec-lua result from a computer: `{output, returns, truncated}` where `returns` is a list
 * of descriptors `{type, value?, repr?, truncated?}`, bounded in depth and size before anything
 * renders or serialises it. Problems name fields and JSON types, never the values.
 */
export function fromResult(result: unknown, maxValues: number): ResultParse {
  if (!isRecord(result)) return { ok: false, problem: `the result is ${aJsonType(result)}, not an object` };
  if (result.output === undefined && result.returns === undefined) return { ok: false, problem: 'the result has neither "output" nor "returns"' };
  const output = result.output ?? '';
  const returns = result.returns ?? [];
  const truncated = result.truncated ?? false;
  if (typeof output !== 'string') return { ok: false, problem: `"output" is ${aJsonType(output)}, not a string` };
  if (typeof truncated !== 'boolean') return { ok: false, problem: `"truncated" is ${aJsonType(truncated)}, not a boolean` };
  if (!Array.isArray(returns)) return { ok: false, problem: `"returns" is ${aJsonType(returns)}, not an array` };
  // maxValues is CC_EXEC_MAX_RESULT_VALUES (mcp-computer sends at most 10,000 table items per value)
  // nothing returned (most chunks): nothing to bound (maxValues is at least 1000)
  const tooBig = returns.length === 0 ? null : boundsProblem(returns, { maxDepth: MAX_RESULT_DEPTH, maxNodes: maxValues });
  if (tooBig) return { ok: false, problem: `"returns" ${tooBig}${tooBig.startsWith('holds') ? ' (CC_EXEC_MAX_RESULT_VALUES)' : ''}` };
  for (let i = 0; i < returns.length; i++) {
    const d: unknown = returns[i];
    const where = `"returns"[${i}]`;
    if (!isRecord(d)) return { ok: false, problem: `${where} is ${aJsonType(d)}, not a value descriptor object` };
    if (!DESCRIPTOR_TYPES.has(d.type)) return { ok: false, problem: `${where}.type is not a Lua type name` };
    if (d.repr !== undefined && typeof d.repr !== 'string') return { ok: false, problem: `${where}.repr is ${aJsonType(d.repr)}, not a string` };
    if (d.base64 !== undefined && (typeof d.base64 !== 'string' || !BASE64.test(d.base64))) {
      return { ok: false, problem: `${where}.base64 is ${typeof d.base64 === 'string' ? 'not base64 text' : aJsonType(d.base64)}` };
    }
    if (d.truncated !== undefined && typeof d.truncated !== 'boolean') {
      return { ok: false, problem: `${where}.truncated is ${aJsonType(d.truncated)}, not a boolean` };
    }
    if (d.bytes !== undefined) {
      const problem = bytesProblem(d.type, d.bytes);
      if (problem) return { ok: false, problem: `${where}.bytes${problem}` };
    }
  }
  return { ok: true, value: { output, returns, truncated } };
}

// The pieces of a finished run's written JSON, each with the quotes of the string after it (plain text)
// or without (anything else, written by JSON.stringify). A template literal joins its pieces one by one
// into a tree of strings that is copied flat again when the answer is written; an answer of a few
// long constant pieces costs about half as much as one of a piece per token (callgrind: ~2,700 against
// ~5,400 instructions for exec-lua's answer, envelope and flattening included).
const TEXT_PLAIN = '{"content":[{"type":"text","text":"';
const TEXT_JSON = '{"content":[{"type":"text","text":';
const ID_PLAIN = '"}],"structuredContent":{"computerId":';
const ID_JSON = '}],"structuredContent":{"computerId":';
const NOTHING_HEAD = `${TEXT_JSON}${JSON.stringify(NOTHING)}${ID_JSON}`;
const NO_OUTPUT = ',"ok":true,"output":""';
const OUTPUT_PLAIN = ',"ok":true,"output":"';
const OUTPUT_JSON = ',"ok":true,"output":';
const NO_RETURNS = [',"returns":[],"truncated":false}}', ',"returns":[],"truncated":true}}'] as const;
const NO_RETURNS_AFTER_PLAIN = ['","returns":[],"truncated":false}}', '","returns":[],"truncated":true}}'] as const;
const RETURNS_PLAIN = '","returns":';
const RETURNS_JSON = ',"returns":';
const TRUNCATED_END = [',"truncated":false}}', ',"truncated":true}}'] as const;

/**
 * The result of a run that finished (`ok: true`), as outcomeResult makes it for that outcome, with its
 * JSON written as it is built (src/jsonrpc/written.ts): only the strings are escaped, and only when they
 * hold more than plain text; the computer's returned values go through JSON.stringify when there are
 * any. The HTTP answer splices the text in instead of JSON.stringify walking the result.
 */
export function okResult(computerId: number, output: string, returns: unknown[], truncated: boolean): ToolResult {
  const outcome: ExecOutcome = { computerId, ok: true, output, returns, truncated };
  const text = render(outcome);
  const result: ToolResult = { content: [{ type: 'text', text }], structuredContent: outcome as unknown as Record<string, unknown> };
  const head = text === NOTHING ? NOTHING_HEAD : isPlainText(text) ? TEXT_PLAIN + text + ID_PLAIN : TEXT_JSON + JSON.stringify(text) + ID_JSON;
  const cut = truncated ? 1 : 0;
  let tail: string;
  if (output === '') tail = returns.length === 0 ? NO_OUTPUT + NO_RETURNS[cut] : NO_OUTPUT + RETURNS_JSON + JSON.stringify(returns) + TRUNCATED_END[cut];
  else if (isPlainText(output)) tail = returns.length === 0 ? OUTPUT_PLAIN + output + NO_RETURNS_AFTER_PLAIN[cut] : OUTPUT_PLAIN + output + RETURNS_PLAIN + JSON.stringify(returns) + TRUNCATED_END[cut];
  else tail = OUTPUT_JSON + JSON.stringify(output) + (returns.length === 0 ? NO_RETURNS[cut] : RETURNS_JSON + JSON.stringify(returns) + TRUNCATED_END[cut]);
  // computerId: a safe integer, written as JSON writes it
  return written(result, head + computerId + tail);
}

/** An exec outcome as the tool result every Lua-running tool answers: its text and its structuredContent. */
export function outcomeResult(outcome: ExecOutcome): ToolResult {
  // the outcome itself is the structuredContent (every caller builds a fresh one): no copies, and
  // the keys in textResult's order (content, isError, structuredContent)
  const content = [{ type: 'text' as const, text: render(outcome) }];
  const structuredContent = outcome as unknown as Record<string, unknown>;
  return outcome.ok ? { content, structuredContent } : { content, isError: true, structuredContent };
}

