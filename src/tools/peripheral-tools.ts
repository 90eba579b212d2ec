// list-peripherals and call-peripheral (issue 11 part B): fixed methods of mcp-computer, no code sent.
import { describe } from '../link/registry.js';
import { isRecord } from '../jsonrpc/message.js';
import { fromResult, renderValue } from './exec-result.js';
import { malformed } from './files.js';
import { answerSchema, callMethod, safeTool } from './safe-tool.js';
import { TIMEOUT_PROPERTY } from './job-tools.js';
import { failedResult, textResult } from './tool.js';

/** Most arguments one call-peripheral passes. */
export const MAX_PERIPHERAL_ARGS = 64;

interface PeripheralInfo {
  name: string;
  types: string[];
  methods: string[];
}

function peripheralsOf(result: unknown): PeripheralInfo[] | null {
  const list = isRecord(result) ? result.peripherals : undefined;
  if (!Array.isArray(list)) return null;
  const out: PeripheralInfo[] = [];
  for (const p of list) {
    if (!isRecord(p) || typeof p.name !== 'string' || !Array.isArray(p.types) || !Array.isArray(p.methods)) return null;
    if (!p.types.every((t) => typeof t === 'string') || !p.methods.every((m) => typeof m === 'string')) return null;
    out.push({ name: p.name, types: p.types as string[], methods: p.methods as string[] });
  }
  return out;
}

export const listPeripherals = safeTool({
  name: 'list-peripherals',
  title: 'List peripherals',
  description:
    "List the peripherals attached to a computer (sides and wired-network names): each one's name, its types (e.g. monitor, " +
    'minecraft:chest + inventory, modem) and the methods call-peripheral can call on it.',
  properties: {},
  outputSchema: answerSchema({ peripherals: { type: 'array', items: { type: 'object' } }, omitted: { type: 'integer' } }, ['items', 'omitted']),
  readOnly: true,
  async run(link, _args, ctx) {
    const answer = await callMethod(ctx, link, 'list-peripherals', {});
    if (!answer.ok) return answer.error;
    const peripherals = peripheralsOf(answer.result);
    if (!peripherals) return malformed(link, 'list-peripherals', 'expected {peripherals: [{name, types, methods}]}');
    // how many more the computer left out to fit its frame limit (mcp-computer sends the first ones by name)
    const left = isRecord(answer.result) ? answer.result.omitted : undefined;
    const omitted = typeof left === 'number' && Number.isSafeInteger(left) && left > 0 ? left : 0;
    let text =
      peripherals.length === 0 && omitted === 0
        ? `No peripherals are attached to computer ${describe(link.computerId, link.label)}.`
        : peripherals.map((p) => `${p.name} (${p.types.join(', ')}): ${p.methods.join(', ')}`).join('\n');
    if (omitted > 0) text += `${text === '' ? '' : '\n'}(${omitted} more ${omitted === 1 ? 'peripheral' : 'peripherals'} left out to fit the frame limit)`;
    const structuredContent = omitted > 0 ? { computerId: link.computerId, peripherals, omitted } : { computerId: link.computerId, peripherals };
    return { ...textResult(text), structuredContent };
  },
});

export const callPeripheral = safeTool({
  name: 'call-peripheral',
  title: 'Call a peripheral method',
  description:
    'Call one method of a peripheral attached to a computer (peripheral.call) with JSON arguments; the returned values come back ' +
    'described like exec-lua\'s ("returns"). Methods that wait for the game (inventory moves) take a tick or two; on timeout ' +
    'or cancel the computer stops waiting for it. list-peripherals says which names and methods exist.',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 256, description: 'peripheral name: a side (left, top ...) or a network name (monitor_0)' },
    method: { type: 'string', minLength: 1, maxLength: 256, description: 'method name, e.g. list, getItemDetail, write, transmit' },
    args: { type: 'array', description: `arguments, in order (JSON values; at most ${MAX_PERIPHERAL_ARGS})` },
    timeoutMs: TIMEOUT_PROPERTY,
  },
  required: ['name', 'method'],
  outputSchema: answerSchema({ returns: { type: 'array', items: { type: 'object' } }, truncated: { type: 'boolean' } }, ['items']),
  readOnly: false,
  destructive: true,
  async run(link, args, ctx) {
    const list = (args.args as unknown[] | undefined) ?? [];
    if (list.length > MAX_PERIPHERAL_ARGS) {
      return failedResult(`argument "args" has ${list.length} values; at most ${MAX_PERIPHERAL_ARGS} are allowed.`, 'invalid_arguments');
    }
    const params = { name: args.name, method: args.method, args: list, argCount: list.length };
    const timeoutMs = (args.timeoutMs as number | undefined) ?? ctx.config.execTimeoutMs;
    const answer = await callMethod(ctx, link, 'call-peripheral', params, timeoutMs, { cancelOnTimeout: true });
    if (!answer.ok) return answer.error;
    const parsed = fromResult(answer.result, ctx.config.execMaxResultValues);
    if (!parsed.ok) return malformed(link, 'call-peripheral', parsed.problem);
    const { returns, output, truncated } = parsed.value;
    const parts = [returns.length > 0 ? `=> ${returns.map(renderValue).join(', ')}` : '(nothing returned)'];
    if (output !== '') parts.unshift(output.replace(/\n$/, ''));
    if (truncated) parts.push('[returned values were truncated to fit the link message limit]');
    return { ...textResult(parts.join('\n')), structuredContent: { computerId: link.computerId, returns, truncated } };
  },
});
