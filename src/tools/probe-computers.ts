// probe-computers: ping every linked computer at once and report one line per computer.
import { dataName, type Link, type Outcome } from '../link/registry.js';
import { dataText } from '../jsonrpc/quote.js';
import type { FanoutObserver } from '../link/fanout.js';
import type { Tool, ToolResult } from './tool.js';
import { boundsProblem, type JsonBounds } from '../jsonrpc/bounds.js';
import { NOTE_SCHEMA, noComputers } from './computer-target.js';

/** Largest non-string pong shown as JSON (mcp-computer always answers with a string). */
const MAX_PONG_BOUNDS: JsonBounds = { maxDepth: 16, maxNodes: 1000 };
/**
 * Longest pong or error text taken from one computer. mcp-computer's pong is `pong from <id> (Label:
 * <label>)`, a label at most 1,024 characters; a computer that does not run it could send a frame's
 * worth (CC_MAX_FRAME_BYTES) and, 1,000 of them in one probe, make its answer gigabytes (twice: text
 * and structuredContent).
 */
export const MAX_PONG_CHARS = 2048;

const STATUSES = ['pong', 'timeout', 'disconnected', 'error'] as const;

/**
 * One computer's line of structuredContent. A class, not an object literal: V8 watches the objects a
 * literal makes and, once most outlive a young-generation collection (a probe keeps all 10,000), makes
 * them in the old generation and throws away the optimised code of everything that made them, which
 * is the whole frame handler path (it inlines the observer), in the first and again in the second big
 * probe. Fields in the order the answer has always listed them; `result` or `error` only when set.
 */
class ProbeEntry {
  declare result?: string;
  declare error?: string;

  constructor(
    readonly computerId: number,
    readonly label: string | null,
    readonly ms: number,
    readonly status: (typeof STATUSES)[number],
  ) {}
}

function withResult(entry: ProbeEntry, result: string): ProbeEntry {
  entry.result = result;
  return entry;
}

function withError(entry: ProbeEntry, error: string): ProbeEntry {
  entry.error = error;
  return entry;
}

function entryFor(computerId: number, label: string | null, outcome: Outcome): ProbeEntry {
  const ms = outcome.ms;
  switch (outcome.status) {
    case 'ok': {
      if (typeof outcome.result === 'string') {
        if (outcome.result.length > MAX_PONG_CHARS) return withError(new ProbeEntry(computerId, label, ms, 'error'), `protocol error: its pong is ${outcome.result.length} characters, more than ${MAX_PONG_CHARS}`);
        return withResult(new ProbeEntry(computerId, label, ms, 'pong'), outcome.result);
      }
      // a non-string pong is shown as JSON only when it is small: one computer's odd answer is its own line
      const problem = boundsProblem(outcome.result, MAX_PONG_BOUNDS);
      if (problem) return withError(new ProbeEntry(computerId, label, ms, 'error'), `protocol error: its pong ${problem}`);
      return withResult(new ProbeEntry(computerId, label, ms, 'pong'), JSON.stringify(outcome.result));
    }
    case 'error': {
      const error = outcome.error;
      return withError(new ProbeEntry(computerId, label, ms, 'error'), error.length > MAX_PONG_CHARS ? `${error.slice(0, MAX_PONG_CHARS)}... (${error.length} characters)` : error);
    }
    case 'timeout':
      return new ProbeEntry(computerId, label, ms, 'timeout');
    // a probe is never cancelled on its own; an aborted call means the bridge stopped waiting
    case 'cancelled':
    case 'disconnected':
      return new ProbeEntry(computerId, label, ms, 'disconnected');
  }
}

function lineFor(entry: ProbeEntry): string {
  switch (entry.status) {
    // a computer's own text (structuredContent keeps it as it is): on its own line, whatever it holds
    case 'pong':
      return dataText(entry.result as string);
    case 'error':
      return `error from ${dataName(entry.computerId, entry.label)}: ${dataText(entry.error as string)}`;
    default:
      return `${entry.status} from ${dataName(entry.computerId, entry.label)}`;
  }
}

/**
 * A probe's entries and text lines, each built when its computer's outcome comes (issue 16: over
 * 10,000 computers, building them all after the last answer took 4-8 ms of the time between that
 * answer and the reply). The arrays are made at their length and filled (one builtin call each) rather
 * than pushed to: a 10,000-step push loop per probe is compiled while it runs, and the array literal it
 * pushed to made V8 throw that code away again every other probe ("not a Smi"); filled, they hold
 * objects (strings) from the start, so storing into them never changes their kind.
 */
class ProbeAnswer implements FanoutObserver {
  private readonly computers: (ProbeEntry | undefined)[];
  private readonly lines: string[];

  constructor(private readonly linked: readonly Link[]) {
    this.computers = new Array<ProbeEntry | undefined>(linked.length).fill(undefined);
    this.lines = new Array<string>(linked.length).fill('');
  }

  settled(outcome: Outcome, index: number): void {
    const link = this.linked[index] as Link;
    const entry = entryFor(link.computerId, link.label, outcome);
    this.computers[index] = entry;
    this.lines[index] = lineFor(entry);
  }

  result(): ToolResult {
    const { computers, lines } = this;
    // every computer's outcome came to settled; if building its entry threw there (the fan-out drops
    // that), it still gets a line
    for (let i = 0; i < computers.length; i++) {
      if (computers[i] !== undefined) continue;
      const link = this.linked[i] as Link;
      const entry = withError(new ProbeEntry(link.computerId, link.label, 0, 'error'), 'the bridge failed while reading its answer');
      computers[i] = entry;
      lines[i] = lineFor(entry);
    }
    return { content: [{ type: 'text', text: lines.join('\n') }], structuredContent: { computers: computers as ProbeEntry[] } };
  }
}

export const probeComputers: Tool = {
  name: 'probe-computers',
  title: 'Probe linked computers',
  description:
    'Ping every ComputerCraft computer linked to the bridge and report one line per computer: its pong, or timeout / disconnected / error. Takes no arguments.',
  inputSchema: { type: 'object', additionalProperties: false },
  outputSchema: {
    type: 'object',
    properties: {
      computers: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            computerId: { type: 'integer' },
            label: { type: ['string', 'null'] },
            status: { type: 'string', enum: [...STATUSES] },
            result: { type: 'string' },
            error: { type: 'string' },
            ms: { type: 'number' },
          },
          required: ['computerId', 'label', 'status', 'ms'],
        },
      },
      note: NOTE_SCHEMA,
    },
    required: ['computers'],
  },
  annotations: { readOnlyHint: true, openWorldHint: true },

  async call(_args, { links, config, signal }) {
    const linked = links.list();
    if (linked.length === 0) return noComputers(links, 'No computers connected.');
    const answer = new ProbeAnswer(linked);
    // one timer and one abort listener for the whole probe; each computer still gets its own id
    await links.requestEach(linked, 'ping', undefined, { timeoutMs: config.probeTimeoutMs, signal }, answer);
    return answer.result();
  },
};
