// The one tool-call path every surface uses (MCP tools/call, REST POST /tools/<name>): lookup,
// enabled check, argument validation, cancellation and error containment. Besides the ToolResult
// it says, as a stable code, how the call went, so each surface can map it its own way (REST to
// HTTP statuses; MCP keeps it to itself).
import type { Config } from '../config.js';
import type { LinkRegistry } from '../link/registry.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { ToolRegistry } from './registry.js';
import type { CancelSignal } from '../cancel.js';
import { validateArgs } from './schema-fast.js';
import type { CallRate } from './call-rate.js';
import { FAILURE, FAILURE_MESSAGE, textResult, type FailureCode, type ToolResult } from './tool.js';
import { cutText } from '../jsonrpc/quote.js';

export interface CallDeps {
  tools: ToolRegistry;
  links: LinkRegistry;
  config: Config;
  log: Logger;
  /** Counts calls by tool and outcome, and caps how many run at once (MCP_MAX_CONCURRENT_CALLS). */
  metrics?: Metrics;
  /** Tool calls per caller per second (MCP_CALL_RATE, MCP_CALL_BURST); absent: no rate limit. */
  rate?: CallRate;
}

export interface CallFailure {
  code: FailureCode;
  /** One sentence for a person: the result's text, or the sentence the tool gave for it (FAILURE_MESSAGE). */
  message: string;
  /** rate_limited: ms until this caller may call again. */
  retryAfterMs?: number;
}

export interface CallOutcome {
  /** What the tool (or the bridge on its behalf) answered; always a complete MCP tool result. */
  result: ToolResult;
  /** Null when the tool ran and succeeded. */
  failure: CallFailure | null;
}

function textOf(result: ToolResult): string {
  return result.content
    .filter((c): c is { type: 'text'; text: string } => c.type === 'text' && typeof c.text === 'string')
    .map((c) => c.text)
    .join('\n');
}

function fail(code: FailureCode, text: string): CallOutcome {
  return { result: textResult(text, true), failure: { code, message: text } };
}

/** Classifies what a tool returned: its own tag wins; an untagged error result is a tool_error. */
function outcomeOf(result: ToolResult): CallOutcome {
  // most results carry no tag: no copy of the result then
  if (!(FAILURE in result)) return { result, failure: result.isError ? { code: 'tool_error', message: textOf(result) } : null };
  const { [FAILURE]: tagged, [FAILURE_MESSAGE]: said, ...plain } = result;
  const code = tagged ?? (result.isError ? 'tool_error' : undefined);
  return { result: plain, failure: code ? { code, message: said ?? textOf(result) } : null };
}

/** The metrics label of a call: only names the registry knows, so callers cannot grow the metrics without bound. */
function labelOf(tools: ToolRegistry, name: string, outcome: CallOutcome): string {
  return outcome.failure?.code === 'unknown_tool' || !tools.get(name) ? '(unknown)' : name;
}

/** The refusal of a call over MCP_CALL_RATE: its sentence says the limit and when to try again. */
function rateLimited(rate: CallRate, waitMs: number): CallOutcome {
  const text = `Too many tool calls: each client may start ${rate.rate} a second, ${rate.burst} at once (MCP_CALL_RATE, MCP_CALL_BURST); try again in ${waitMs} ms.`;
  return { result: textResult(text, true), failure: { code: 'rate_limited', message: text, retryAfterMs: waitMs } };
}

/**
 * Calls the tool `name` with `args` (undefined means no arguments). `signal` is the caller's: abort
 * it when the caller stops waiting. `caller`: who is calling, for MCP_CALL_RATE (the surface names
 * it: surfaces/rate-key.ts). Never throws for anything a caller or a tool does.
 */
// one async function for the whole call (issue 16: each async layer costs a promise and a frame per call)
export async function callTool(deps: CallDeps, name: string, args: unknown, signal: CancelSignal, caller = 'local'): Promise<CallOutcome> {
  const { metrics, tools, links, config, log, rate } = deps;
  // before anything else: a refused call costs its caller nothing and the bridge one Map lookup
  const now = rate !== undefined || metrics ? Date.now() : 0;
  const waitMs = rate === undefined ? 0 : rate.take(caller, now);
  if (waitMs > 0) {
    const refused = rateLimited(rate as CallRate, waitMs);
    if (metrics) metrics.callEnded(labelOf(tools, name, refused), 'rate_limited', 0);
    return refused;
  }
  if (metrics && metrics.callsInFlight >= config.maxConcurrentCalls) {
    const busy = fail('busy', `The bridge is busy: ${config.maxConcurrentCalls} tool calls are running (MCP_MAX_CONCURRENT_CALLS); try again in a second.`);
    metrics.callEnded(labelOf(tools, name, busy), 'busy', 0);
    return busy;
  }
  if (metrics) metrics.callsInFlight++;
  const startedAt = now;
  let outcome: CallOutcome;
  try {
    const tool = tools.get(name);
    const given = args ?? {};
    let invalid: string | null = null;
    if (!tool) outcome = fail('unknown_tool', `Unknown tool: ${cutText(name)}`);
    else if (!tools.isEnabled(tool)) outcome = fail('disabled', `${name} is disabled on this bridge (CC_EXEC_LUA=off). Ask its operator to turn it on.`);
    // an upstream tool (its own definition) checks its own arguments: the bridge enforces only the basics
    else if ((invalid = validateArgs(given, tool.inputSchema, 'arguments', !tool.definition, config.patternMaxChars))) outcome = fail('invalid_arguments', `Invalid arguments for ${name}: ${invalid}.`);
    else {
      try {
        outcome = outcomeOf(await tool.call(given as Record<string, unknown>, { links, config, log, signal }));
      } catch (err) {
        log.error(`tool ${name} failed: ${(err as Error).stack ?? String(err)}`);
        // the MCP text keeps the error's message (as before); the classification leaks nothing internal
        outcome = {
          result: textResult(`${name} failed inside the bridge: ${(err as Error).message}`, true),
          failure: { code: 'internal', message: `${name} failed inside the bridge; its log has the details` },
        };
      }
    }
  } finally {
    if (metrics) metrics.callsInFlight--;
  }
  if (metrics) metrics.callEnded(labelOf(tools, name, outcome), outcome.failure?.code ?? 'ok', Date.now() - startedAt);
  return outcome;
}

