// list-computers: every linked computer with what it said it is (hello, kept current by info frames),
// from the bridge's own records: no request is sent, so it answers even for a busy computer.
import { identityLine, jobsLine, omittedText, peripheralsLine, JOB_STATES, KINDS } from '../link/identity.js';
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
  const pin = pinned === null ? '' : pinned(link.computerId) ? '; id pinned to its key' : '; id not pinned';
  return (
    `${dataName(link.computerId, link.label)}: ${identityLine(link.identity, link.version)}; ${peripheralsLine(link.identity.peripherals)}${jobsLine(link.identity.jobs)}${omittedText(link.identity.omitted)}; ` +
    `connected ${new Date(link.connectedAt).toISOString()}, last seen ${new Date(link.lastSeenAt).toISOString()}${pin}`
  );
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

  async call(_args, { links }) {
    const linked = links.list();
    if (linked.length === 0) return noComputers(links, 'No computers are linked.');
    const { pinned } = links;
    return { ...textResult(linked.map((l) => line(l, pinned)).join('\n')), structuredContent: { computers: linked.map((l) => computerEntry(l, pinned)) } };
  },
};
