// probe-computers: ping every linked computer at once and report one line per computer.
import { describe, type Outcome } from '../link/registry.js';
import { textResult, type Tool } from './tool.js';

const STATUSES = ['pong', 'timeout', 'disconnected', 'error'] as const;

interface ProbeEntry {
  computerId: number;
  label: string | null;
  status: (typeof STATUSES)[number];
  result?: string;
  error?: string;
  ms: number;
}

function entryFor(computerId: number, label: string | null, outcome: Outcome): ProbeEntry {
  const base = { computerId, label, ms: outcome.ms };
  switch (outcome.status) {
    case 'ok':
      return { ...base, status: 'pong', result: typeof outcome.result === 'string' ? outcome.result : JSON.stringify(outcome.result) };
    case 'error':
      return { ...base, status: 'error', error: outcome.error };
    case 'timeout':
      return { ...base, status: 'timeout' };
    // a probe is never cancelled on its own; an aborted call means the bridge stopped waiting
    case 'cancelled':
    case 'disconnected':
      return { ...base, status: 'disconnected' };
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
    },
    required: ['computers'],
  },
  annotations: { readOnlyHint: true, openWorldHint: true },

  async call(_args, { links, config, signal }) {
    const linked = links.list();
    if (linked.length === 0) return { ...textResult('No computers connected.'), structuredContent: { computers: [] } };
    const outcomes = await Promise.all(
      linked.map((link) => links.request(link, 'ping', undefined, { timeoutMs: config.probeTimeoutMs, signal })),
    );
    const computers = linked.map((link, i) => entryFor(link.computerId, link.label, outcomes[i] as Outcome));
    return { ...textResult(computers.map(lineFor).join('\n')), structuredContent: { computers } };
  },
};
