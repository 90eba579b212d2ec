// exec-lua: run a Lua chunk on one linked computer and return its output and returned values.
// The answer is checked and rendered by exec-result.ts; the computer is found by computer-target.ts.
import { FrameTooLargeError, Link, describe, type LinkRegistry, type Outcome, type OutcomeSink } from '../link/registry.js';
import type { CancelSignal } from '../cancel.js';
import { LuaParams } from '../link/request-frames.js';
import { startDetached } from './job-tools.js';
import { findComputer, linkedList } from './computer-target.js';
import { fromResult, okResult, outcomeResult } from './exec-result.js';
import { classified, failedResult, type FailureCode, type Tool, type ToolResult } from './tool.js';

/** Default of CC_EXEC_MAX_CODE_BYTES (also check-lua's bound). */
export const MAX_CODE_BYTES = 64 * 1024;
/** The most CC_EXEC_MAX_CODE_BYTES may be: the schema's bound, the variable's is checked in the call. */
export const MAX_CODE_CEILING = 1024 * 1024;
export const MAX_TIMEOUT_MS = 300_000;
/** CC:Tweaked's default max_websocket_message: the largest frame a computer can receive. */
export const CC_MAX_MESSAGE_BYTES = 131_072;

const NEVER_YIELDS =
  'A chunk that never yields cannot be stopped this way; CC itself stops it after about 7 s ("Too long without yielding").';

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

  // not async: it hands back runLua's promise itself (an async function returning a promise adds a
  // promise and two microtask jobs to adopt it, in every call)
  call(args, { links, config, log, signal }) {
    const code = args.code as string;
    // a UTF-16 unit is at most 3 bytes of UTF-8: most chunks are settled without counting
    if (code.length * 3 > config.execMaxCodeBytes && Buffer.byteLength(code) > config.execMaxCodeBytes) {
      return Promise.resolve(
        failedResult(`argument "code" is ${Buffer.byteLength(code)} bytes; at most ${config.execMaxCodeBytes} are allowed (CC_EXEC_MAX_CODE_BYTES).`, 'invalid_arguments'),
      );
    }
    const target = findComputer(links, args);
    if (typeof target === 'string') return Promise.resolve(failedResult(`${target} ${linkedList(links)}`, 'unknown_computer'));
    if (!(target instanceof Link)) return Promise.resolve(target);
    if (args.detach === true) return startDetached('exec-lua', target, { links, config, log, signal }, { code });
    return runLua(links, target, code, undefined, (args.timeoutMs as number | undefined) ?? config.execTimeoutMs, signal, config.execMaxResultValues);
  },
};

/**
 * The exec path every Lua-running tool shares (exec-lua and config-defined tools): sends the chunk,
 * and `args` as data beside it (the chunk receives them as `...`, never spliced into source).
 */
export function runLua(
  links: LinkRegistry,
  target: Link,
  code: string,
  args: Record<string, unknown> | undefined,
  timeoutMs: number,
  signal: CancelSignal,
  maxResultValues: number,
): Promise<ToolResult> {
  const call = new LuaCall(target, timeoutMs, maxResultValues);
  try {
    links.requestTo(target, 'exec-lua', new LuaParams(code, args), { timeoutMs, signal, cancelOnTimeout: true, maxFrameBytes: CC_MAX_MESSAGE_BYTES }, call);
  } catch (err) {
    if (err instanceof FrameTooLargeError) return Promise.resolve(failedResult(`The code is too large to send: ${err.message}.`, 'invalid_arguments'));
    return Promise.reject(err);
  }
  return call.promise;
}

/**
 * One Lua run: its promise, resolved with the tool result when the request ends (the registry hands
 * the outcome here: no promise per request and no await in between, issue 16).
 */
class LuaCall implements OutcomeSink {
  readonly promise: Promise<ToolResult>;
  private resolve!: (result: ToolResult) => void;
  private reject!: (err: unknown) => void;

  constructor(
    private readonly target: Link,
    private readonly timeoutMs: number,
    private readonly maxResultValues: number,
  ) {
    this.promise = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  settled(outcome: Outcome): void {
    // it runs inside the link's frame handler: anything thrown fails this call, as a throw in the tool would
    try {
      this.resolve(luaResult(outcome, this.target, this.timeoutMs, this.maxResultValues));
    } catch (err) {
      this.reject(err);
    }
  }
}

function luaResult(outcome: Outcome, target: Link, timeoutMs: number, maxResultValues: number): ToolResult {
  switch (outcome.status) {
    case 'ok': {
      const parsed = fromResult(outcome.result, maxResultValues);
      if (!parsed.ok) return failed(target, maxResultValues, malformed(target, parsed.problem));
      // the outcome written out, not spread from the parse (the same keys in the same order)
      const { output, returns, truncated } = parsed.value;
      return okResult(target.computerId, output, returns, truncated);
    }
    case 'error':
      if (outcome.error === 'unknown method') {
        return failed(
          target,
          maxResultValues,
          `computer ${describe(target.computerId, target.label)} runs an mcp-computer program without exec-lua; update its program (wget http://<bridge-host>:<link port>/mcp-computer.lua).`,
        );
      }
      return failed(target, maxResultValues, outcome.error, outcome.result);
    // the result's text is `error: <error>`; the failure's own sentence (REST's error.message) names
    // the computer as the other tools' do
    case 'timeout':
      return failed(target, maxResultValues, `timed out after ${timeoutMs} ms; cancel sent. ${NEVER_YIELDS}`, undefined, 'timeout', `computer ${describe(target.computerId, target.label)} did not answer within ${timeoutMs} ms; cancel sent. ${NEVER_YIELDS}`);
    case 'cancelled':
      return failed(target, maxResultValues, `cancelled; cancel sent to the computer. ${NEVER_YIELDS}`, undefined, 'cancelled', `cancelled while waiting for computer ${describe(target.computerId, target.label)}; cancel sent to the computer. ${NEVER_YIELDS}`);
    case 'disconnected': {
      const dropped = `the link to computer ${describe(target.computerId, target.label)} dropped before it answered (${outcome.reason}).`;
      return failed(target, maxResultValues, dropped, undefined, 'unavailable', dropped);
    }
  }
}

function malformed(target: Link, problem: string): string {
  return `protocol error: computer ${describe(target.computerId, target.label)} sent a malformed exec-lua result: ${problem}`;
}

/** A failed exec as its result: `partial`, the computer's answer beside its error, kept when well-formed. */
function failed(target: Link, maxResultValues: number, error: string, partial?: unknown, code?: FailureCode, message?: string): ToolResult {
  const parsed = partial === undefined ? null : fromResult(partial, maxResultValues);
  const kept = parsed?.ok ? parsed.value : {};
  const said = parsed && !parsed.ok ? `${error}\n${malformed(target, parsed.problem)}` : error;
  const result = outcomeResult({ computerId: target.computerId, ok: false, output: '', returns: [], truncated: false, ...kept, error: said });
  return code ? classified(result, code, message) : result;
}
