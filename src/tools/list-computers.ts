// list-computers: every linked computer with what it said it is (hello, kept current by info frames),
// from the bridge's own records: no request is sent, so it answers even for a busy computer.
import { sizeBound } from '../link/identity-budget.js';
import { identityLine, jobsLine, omittedText, peripheralsLine } from '../link/identity-text.js';
import { JOB_STATES, KINDS } from '../link/identity.js';
import { plural } from '../plural.js';
import { dataName, type Link } from '../link/registry.js';
import type { Schema } from './schema.js';
import { textResult, type Tool } from './tool.js';
import { NOTE_SCHEMA, noComputers } from './computer-target.js';

/** One computer as list-computers' structuredContent and REST GET /computers show it (computerEntry). */
export const COMPUTER_SCHEMA: Schema & { properties: Record<string, Schema>; required: string[] } = {
  type: 'object',
  properties: {
    computerId: { type: 'integer' },
    label: { type: ['string', 'null'] },
    kind: { type: ['string', 'null'], enum: [...KINDS, null] },
    advanced: { type: ['boolean', 'null'] },
    host: { type: ['string', 'null'], description: "the computer's _HOST" },
    ccVersion: { type: ['string', 'null'] },
    version: { type: ['string', 'null'], description: 'version of the mcp-computer program' },
    peripherals: {
      type: ['array', 'null'],
      items: {
        type: 'object',
        properties: { name: { type: 'string' }, types: { type: 'array', items: { type: 'string' } } },
        required: ['name', 'types'],
      },
    },
    jobs: {
      type: ['array', 'null'],
      description: "its detached jobs (exec-lua or run-program with detach:true), running first, as it last said (hello, info frames); null from a program that does not say; job-status reads one",
      items: {
        type: 'object',
        properties: { job: { type: 'string' }, kind: { type: 'string' }, state: { type: 'string', enum: [...JOB_STATES] }, what: { type: 'string' } },
        required: ['job', 'kind', 'state', 'what'],
      },
    },
    omitted: {
      type: 'object',
      description: 'present when peripherals or jobs were left out of the lists above, by the computer to fit its --max-frame or by the bridge to fit CC_MAX_IDENTITY_BYTES: how many of each',
      properties: { peripherals: { type: 'integer' }, jobs: { type: 'integer' } },
      required: ['peripherals', 'jobs'],
    },
    connectedAt: { type: 'string', format: 'date-time' },
    lastSeenAt: { type: 'string', format: 'date-time' },
    pinned: {
      type: ['boolean', 'null'],
      description: 'whether the bridge holds this computer id for the key it linked with (CC_LINK_PIN), so no other computer can link as it; null when the bridge does not pin (CC_LINK_PIN=off)',
    },
  },
  required: ['computerId', 'label', 'kind', 'advanced', 'host', 'ccVersion', 'version', 'peripherals', 'jobs', 'connectedAt', 'lastSeenAt', 'pinned'],
};

/** One computer as list-computers' structuredContent and REST GET /computers show it. */
export function computerEntry(link: Link, pinned: ((computerId: number) => boolean) | null): Record<string, unknown> {
  const { kind, advanced, host, ccVersion, peripherals, jobs, omitted } = link.identity;
  const entry: Record<string, unknown> = {
    computerId: link.computerId,
    label: link.label,
    kind,
    advanced,
    host,
    ccVersion,
    version: link.version,
    peripherals: peripherals === null ? null : peripherals.map((p) => ({ name: p.name, types: [...p.types] })),
    jobs: jobs === null ? null : jobs.map((j) => ({ ...j })),
    connectedAt: new Date(link.connectedAt).toISOString(),
    lastSeenAt: new Date(link.lastSeenAt).toISOString(),
    pinned: pinned === null ? null : pinned(link.computerId),
  };
  if (omitted !== undefined) entry.omitted = { peripherals: omitted.peripherals, jobs: omitted.jobs };
  return entry;
}

function line(link: Link, pinned: ((computerId: number) => boolean) | null): string {
  return lineWith(link, pinned, `${peripheralsLine(link.identity.peripherals)}${jobsLine(link.identity.jobs)}${omittedText(link.identity.omitted)}`);
}

function lineWith(link: Link, pinned: ((computerId: number) => boolean) | null, lists: string): string {
  const pin = pinned === null ? '' : pinned(link.computerId) ? '; id pinned to its key' : '; id not pinned';
  return (
    `${dataName(link.computerId, link.label)}: ${identityLine(link.identity, link.version)}; ${lists}; ` +
    `connected ${new Date(link.connectedAt).toISOString()}, last seen ${new Date(link.lastSeenAt).toISOString()}${pin}`
  );
}

/** A computer's entry and line without its peripherals and jobs, which `omitted` then counts (an answer over MCP_LIST_COMPUTERS_MAX_CHARS). */
function without(link: Link, pinned: ((computerId: number) => boolean) | null, entry: Record<string, unknown>): { entry: Record<string, unknown>; line: string } {
  const { peripherals, jobs, omitted } = link.identity;
  const left = { peripherals: (omitted?.peripherals ?? 0) + (peripherals?.length ?? 0), jobs: (omitted?.jobs ?? 0) + (jobs?.length ?? 0) };
  const compact: Record<string, unknown> = { ...entry, peripherals: peripherals === null ? null : [], jobs: jobs === null ? null : [] };
  delete compact.omitted;
  if (left.peripherals > 0 || left.jobs > 0) compact.omitted = left;
  const parts = [plural(left.peripherals, 'peripheral'), plural(left.jobs, 'job')];
  return { entry: compact, line: lineWith(link, pinned, `peripherals and jobs left out of this answer (MCP_LIST_COMPUTERS_MAX_CHARS): ${parts.join(', ')}`) };
}

/** list-computers' lines (null for GET /computers, which has none), entries, and a note when the answer was cut. */
export interface ComputerList {
  lines: string[] | null;
  entries: Record<string, unknown>[];
  note: string | null;
}

/** More characters than one computer's entry and line can take as JSON: its strings at 6 each (\\uXXXX), three times (entry, line, the line's escapes), and room for the rest. */
function entryBound(link: Link): number {
  return 3 * (sizeBound(link.identity) + 6 * ((link.label?.length ?? 0) + (link.version?.length ?? 0))) + 1024;
}

/**
 * Every computer's entry (and line, with `lines`), in id order, in at most about `maxChars` characters
 * of JSON (MCP_LIST_COMPUTERS_MAX_CHARS): V8 cannot make a string of more than 2^29 characters, so an
 * unbounded answer over many rich computers failed as a whole. Whole computers while they fit; from the
 * first that does not, computers without their peripherals and jobs (counted in `omitted`); then none,
 * and the note says who was cut. Answers that cannot come near the bound (most) are not measured.
 */
export function computerList(linked: readonly Link[], pinned: ((computerId: number) => boolean) | null, maxChars: number, withLines: boolean): ComputerList {
  let bound = 0;
  for (const link of linked) bound += entryBound(link);
  if (bound <= maxChars) {
    return { lines: withLines ? linked.map((l) => line(l, pinned)) : null, entries: linked.map((l) => computerEntry(l, pinned)), note: null };
  }
  const lines: string[] = [];
  const entries: Record<string, unknown>[] = [];
  const size = (entry: Record<string, unknown>, text: string) => JSON.stringify(entry).length + (withLines ? JSON.stringify(text).length : 0) + 2;
  let used = 0;
  let firstCut: number | null = null;
  let cut = 0;
  let i = 0;
  for (; i < linked.length; i++) {
    const link = linked[i] as Link;
    const entry = computerEntry(link, pinned);
    if (firstCut === null) {
      const text = withLines ? line(link, pinned) : '';
      const whole = size(entry, text);
      if (used + whole <= maxChars) {
        entries.push(entry);
        lines.push(text);
        used += whole;
        continue;
      }
    }
    const compact = without(link, pinned, entry);
    const small = size(compact.entry, compact.line);
    if (used + small > maxChars) break;
    firstCut ??= link.computerId;
    cut++;
    entries.push(compact.entry);
    lines.push(compact.line);
    used += small;
  }
  const parts: string[] = [];
  if (cut > 0) parts.push(`from computer ${firstCut} on, ${plural(cut, 'computer is', 'computers are')} listed without peripherals and jobs (list-peripherals reads one computer's)`);
  if (i < linked.length) {
    const last = linked[linked.length - 1] as Link;
    parts.push(`${plural(linked.length - i, 'more computer is', 'more computers are')} not listed (ids ${(linked[i] as Link).computerId} to ${last.computerId})`);
  }
  // measured and found to fit whole: no note
  const note = parts.length === 0 ? null : `The answer reached MCP_LIST_COMPUTERS_MAX_CHARS (${maxChars} characters): ${parts.join('; ')}.`;
  return { lines: withLines ? lines : null, entries, note };
}

export const listComputers: Tool = {
  name: 'list-computers',
  title: 'List linked computers',
  description:
    'List every ComputerCraft computer linked to the bridge, one line each: id and label, kind (computer, turtle, pocket, command), ' +
    'advanced or basic, CC version and _HOST, mcp-computer version, attached peripherals (name and types), its detached jobs (id, state), ' +
    'when it linked and was last heard from, and whether its id is pinned to its key (no other computer can link as it). ' +
    'Answers from what the computers reported (no request is sent). Takes no arguments.',
  inputSchema: { type: 'object', additionalProperties: false },
  outputSchema: {
    type: 'object',
    properties: {
      computers: { type: 'array', items: COMPUTER_SCHEMA },
      note: NOTE_SCHEMA,
    },
    required: ['computers'],
  },
  annotations: { readOnlyHint: true, openWorldHint: false },

  async call(_args, { links, config }) {
    const linked = links.list();
    if (linked.length === 0) return noComputers(links, 'No computers are linked.');
    const { lines, entries, note } = computerList(linked, links.pinned, config.listComputersMaxChars, true);
    const text = (lines as string[]).join('\n');
    if (note === null) return { ...textResult(text), structuredContent: { computers: entries } };
    return { ...textResult(`${text}\n${note}`), structuredContent: { computers: entries, note } };
  },
};
