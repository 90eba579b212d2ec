// probe-computers: ping every linked computer at once and report one line per computer.
import { describe, type Outcome } from '../link/registry.js';
import type { Tool } from './tool.js';
import { boundsProblem, type JsonBounds } from '../jsonrpc/bounds.js';
import { NOTE_SCHEMA, noComputers } from './computer-target.js';

/** Largest non-string pong shown as JSON (mcp-computer always answers with a string). */
const MAX_PONG_BOUNDS: JsonBounds = { maxDepth: 16, maxNodes: 1000 };

const STATUSES = ['pong', 'timeout', 'disconnected', 'error'] as const;

interface ProbeEntry {
  computerId: number;
  label: string | null;
  status: (typeof STATUSES)[number];
  result?: string;
  error?: string;
  ms: number;
}

// entries are built as literals (no spread of a shared base): one object per computer per probe
function entryFor(computerId: number, label: string | null, outcome: Outcome): ProbeEntry {
  const ms = outcome.ms;
  switch (outcome.status) {
    case 'ok': {
      if (typeof outcome.result === 'string') return { computerId, label, ms, status: 'pong', result: outcome.result };
      // a non-string pong is shown as JSON only when it is small: one computer's odd answer is its own line
      const problem = boundsProblem(outcome.result, MAX_PONG_BOUNDS);
      if (problem) return { computerId, label, ms, status: 'error', error: `protocol error: its pong ${problem}` };
      return { computerId, label, ms, status: 'pong', result: JSON.stringify(outcome.result) };
    }
    case 'error':
      return { computerId, label, ms, status: 'error', error: outcome.error };
    case 'timeout':
      return { computerId, label, ms, status: 'timeout' };
    // a probe is never cancelled on its own; an aborted call means the bridge stopped waiting
    case 'cancelled':
    case 'disconnected':
      return { computerId, label, ms, status: 'disconnected' };
  }
}

function lineFor(entry: ProbeEntry): string {
  const who = describe(entry.computerId, entry.label);
  switch (entry.status) {
    case 'pong':
      return entry.result as string;
    case 'error':
      return `error from ${who}: ${entry.error}`;
    default:
      return `${entry.status} from ${who}`;
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
    // one timer and one abort listener for the whole probe; each computer still gets its own id
    const outcomes = await links.requestAll(linked, 'ping', undefined, { timeoutMs: config.probeTimeoutMs, signal });
    const computers = linked.map((link, i) => entryFor(link.computerId, link.label, outcomes[i] as Outcome));
    return { content: [{ type: 'text', text: computers.map(lineFor).join('\n') }], structuredContent: { computers } };
  },
};
