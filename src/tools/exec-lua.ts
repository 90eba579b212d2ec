// exec-lua: run a Lua chunk on one linked computer and return its output and returned values.
import { FrameTooLargeError, Link, describe, type LinkRegistry } from '../link/registry.js';
import { isRecord } from '../jsonrpc/message.js';
import type { CancelSignal } from '../cancel.js';
import { aJsonType, boundsProblem } from '../jsonrpc/bounds.js';
import { startDetached } from './job-tools.js';
import { classified, failedResult, textResult, type FailureCode, type Tool, type ToolResult } from './tool.js';

/** Default of CC_EXEC_MAX_CODE_BYTES (also check-lua's bound). */
export const MAX_CODE_BYTES = 64 * 1024;
/** The most CC_EXEC_MAX_CODE_BYTES may be: the schema's bound, the variable's is checked in the call. */
export const MAX_CODE_CEILING = 1024 * 1024;
export const MAX_TIMEOUT_MS = 300_000;
/** CC:Tweaked's default max_websocket_message: the largest frame a computer can receive. */
export const CC_MAX_MESSAGE_BYTES = 131_072;

const NEVER_YIELDS =
  'A chunk that never yields cannot be stopped this way; CC itself stops it after about 7 s ("Too long without yielding").';

interface ExecOutcome {
  computerId: number;
  ok: boolean;
  output: string;
  returns: unknown[];
  truncated: boolean;
  error?: string;
}

export function linkedList(links: LinkRegistry): string {
  const linked = links.list();
  if (linked.length === 0) return 'No computers are linked.';
  return `Linked computers: ${linked.map((l) => describe(l.computerId, l.label)).join(', ')}.`;
}

/** Finds the one computer the arguments name, or says why not (a string: no such computer). */
export function findComputer(links: LinkRegistry, args: Record<string, unknown>): Link | string | ToolResult {
  const hasId = args.computerId !== undefined;
  const hasLabel = args.computer !== undefined;
  if (hasId && hasLabel) return failedResult(`Give either "computerId" or "computer", not both. ${linkedList(links)}`, 'invalid_arguments');
  if (hasId) {
    return links.get(args.computerId as number) ?? `No linked computer has id ${args.computerId}.`;
  }
  if (hasLabel) {
    const matches = links.list().filter((l) => l.label === args.computer);
    if (matches.length === 1) return matches[0] as Link;
    if (matches.length === 0) return `No linked computer has the label ${JSON.stringify(args.computer)}.`;
    return `The label ${JSON.stringify(args.computer)} matches ${matches.length} computers (ids ${matches
      .map((l) => l.computerId)
      .join(', ')}); use "computerId".`;
  }
  return failedResult(`Say which computer: "computerId" (a number) or "computer" (an exact label). ${linkedList(links)}`, 'invalid_arguments');
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

function render(outcome: ExecOutcome): string {
  const parts: string[] = [];
  if (outcome.output !== '') parts.push(outcome.output.replace(/\n$/, ''));
  if (outcome.ok) {
    if (outcome.returns.length > 0) parts.push(`=> ${outcome.returns.map(renderValue).join(', ')}`);
    if (parts.length === 0) parts.push('(no output, nothing returned)');
  } else {
    parts.push(`error: ${outcome.error}`);
  }
  if (outcome.truncated) parts.push('[output or returned values were truncated to fit the link message limit]');
  return parts.join('\n');
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
  const tooBig = boundsProblem(returns, { maxDepth: MAX_RESULT_DEPTH, maxNodes: maxValues });
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

function finish(outcome: ExecOutcome): ToolResult {
  return { ...textResult(render(outcome), !outcome.ok), structuredContent: { ...outcome } };
}

export const execLua: Tool = {
  name: 'exec-lua',
  title: 'Run Lua on a computer',
  description:
    'Run a Lua chunk on one linked ComputerCraft computer (CC:Tweaked, Lua 5.2 dialect) with the full authority of that computer. ' +
    'Returns everything the chunk printed (print, write, printError, io.write, term calls) and its returned values. ' +
    'The chunk may yield (sleep, os.pullEvent, turtle calls); on timeout or cancellation the computer stops it at its next yield. ' +
    'Pick the computer with "computerId" or an exact "computer" label; probe-computers lists them.',
  inputSchema: {
    type: 'object',
    properties: {
      computerId: { type: 'integer', minimum: 0, description: 'id of the target computer (os.getComputerID())' },
      computer: { type: 'string', minLength: 1, description: 'label of the target computer; must match exactly one linked computer' },
      code: {
        type: 'string',
        minLength: 1,
        maxLength: MAX_CODE_CEILING,
        description: 'Lua source to run, at most CC_EXEC_MAX_CODE_BYTES bytes (65536 unless the bridge sets it); `return` values come back described',
      },
      timeoutMs: {
        type: 'integer',
        minimum: 1,
        maximum: MAX_TIMEOUT_MS,
        description: 'how long to wait before cancelling (default CC_EXEC_TIMEOUT_MS, 10000)',
      },
      detach: { type: 'boolean', description: 'run as a job that outlives this call: answers at once with its id (see job-status)' },
    },
    required: ['code'],
    additionalProperties: false,
  },
  outputSchema: {
    type: 'object',
    properties: {
      computerId: { type: 'integer' },
      ok: { type: 'boolean' },
      output: { type: 'string' },
      returns: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            type: { type: 'string', enum: ['nil', 'boolean', 'number', 'string', 'table', 'function', 'thread', 'userdata'] },
            value: {},
            repr: { type: 'string' },
            base64: { type: 'string', contentEncoding: 'base64', description: 'the exact bytes of a string that is not valid UTF-8' },
            bytes: {
              type: 'array',
              description: 'for a table: each string in value (or key, with key: true) that is not valid UTF-8, with its exact bytes; value shows it as a Lua literal body',
              items: {
                type: 'object',
                properties: {
                  path: { type: 'array', items: { type: ['string', 'integer'] }, description: 'object keys and 0-based array positions from value down to the string' },
                  key: { type: 'boolean', description: 'true: the string is the last key of path, not its value' },
                  base64: { type: 'string', contentEncoding: 'base64' },
                  truncated: { type: 'boolean' },
                },
                required: ['path', 'base64'],
              },
            },
          },
          required: ['type'],
        },
      },
      truncated: { type: 'boolean' },
      error: { type: 'string' },
      job: { type: 'string' },
    },
    required: ['computerId', 'ok', 'output', 'returns', 'truncated'],
  },
  annotations: { destructiveHint: true, openWorldHint: true },
  enabled: (config) => config.execLua,

  async call(args, { links, config, log, signal }) {
    const code = args.code as string;
    if (Buffer.byteLength(code) > config.execMaxCodeBytes) {
      return failedResult(`argument "code" is ${Buffer.byteLength(code)} bytes; at most ${config.execMaxCodeBytes} are allowed (CC_EXEC_MAX_CODE_BYTES).`, 'invalid_arguments');
    }
    const target = findComputer(links, args);
    if (typeof target === 'string') return failedResult(`${target} ${linkedList(links)}`, 'unknown_computer');
    if (!(target instanceof Link)) return target;
    if (args.detach === true) return startDetached('exec-lua', target, { links, config, log, signal }, { code });
    return runLua(links, target, code, undefined, (args.timeoutMs as number | undefined) ?? config.execTimeoutMs, signal, config.execMaxResultValues);
  },
};

/**
 * The exec path every Lua-running tool shares (exec-lua and config-defined tools): sends the chunk,
 * and `args` as data beside it (the chunk receives them as `...`, never spliced into source).
 */
export async function runLua(
  links: LinkRegistry,
  target: Link,
  code: string,
  args: Record<string, unknown> | undefined,
  timeoutMs: number,
  signal: CancelSignal,
  maxResultValues: number,
): Promise<ToolResult> {
    const computerId = target.computerId;
    let outcome;
    try {
      outcome = await links.request(target, 'exec-lua', args === undefined ? { code } : { code, args }, {
        timeoutMs,
        signal,
        cancelOnTimeout: true,
        maxFrameBytes: CC_MAX_MESSAGE_BYTES,
      });
    } catch (err) {
      if (err instanceof FrameTooLargeError) return failedResult(`The code is too large to send: ${err.message}.`, 'invalid_arguments');
      throw err;
    }
    const malformed = (problem: string) => `protocol error: computer ${describe(computerId, target.label)} sent a malformed exec-lua result: ${problem}`;
    const failed = (error: string, partial?: unknown, code?: FailureCode) => {
      const parsed = partial === undefined ? null : fromResult(partial, maxResultValues);
      const kept = parsed?.ok ? parsed.value : {};
      const said = parsed && !parsed.ok ? `${error}\n${malformed(parsed.problem)}` : error;
      const result = finish({ computerId, ok: false, output: '', returns: [], truncated: false, ...kept, error: said });
      return code ? classified(result, code) : result;
    };

    switch (outcome.status) {
      case 'ok': {
        const parsed = fromResult(outcome.result, maxResultValues);
        if (!parsed.ok) return failed(malformed(parsed.problem));
        return finish({ computerId, ok: true, ...parsed.value });
      }
      case 'error':
        if (outcome.error === 'unknown method') {
          return failed(
            `computer ${describe(computerId, target.label)} runs an mcp-computer program without exec-lua; update its program (wget http://<bridge-host>:<link port>/mcp-computer.lua).`,
          );
        }
        return failed(outcome.error, outcome.result);
      case 'timeout':
        return failed(`timed out after ${timeoutMs} ms; cancel sent. ${NEVER_YIELDS}`, undefined, 'timeout');
      case 'cancelled':
        return failed(`cancelled; cancel sent to the computer. ${NEVER_YIELDS}`, undefined, 'cancelled');
      case 'disconnected':
        return failed(`the link to computer ${describe(computerId, target.label)} dropped before it answered (${outcome.reason}).`, undefined, 'unavailable');
    }
}
