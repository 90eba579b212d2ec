// What a computer says it is (identity.ts), written for people: the lines of list-computers and the
// log's words for what a frame left out and for how its jobs changed (pure).
import { dataText, quoteValue, quoteWhole } from '../jsonrpc/quote.js';
import { plural } from '../plural.js';
import type { Identity, JobInfo, Omitted, Peripheral } from './identity.js';

/**
 * What a computer left out, for a list-computers line or the log: ` (left out to fit its frame limit: 3
 * peripherals, 1 job)`; `... to fit its frame limit or the bridge's CC_MAX_IDENTITY_BYTES: ...` when the
 * bridge cut some too.
 */
export function omittedText(omitted: Omitted | undefined): string {
  if (omitted === undefined) return '';
  const parts: string[] = [];
  if (omitted.peripherals > 0) parts.push(plural(omitted.peripherals, 'peripheral'));
  if (omitted.jobs > 0) parts.push(plural(omitted.jobs, 'job'));
  return ` (left out to fit its frame limit${omitted.budget === true ? " or the bridge's CC_MAX_IDENTITY_BYTES" : ''}: ${parts.join(', ')})`;
}

/** What changed between two job lists, for the log: `job "a" started`, `job "a" running -> done`, `job "b" gone`. */
export function jobChanges(before: readonly JobInfo[] | null, after: readonly JobInfo[]): string[] {
  const old = new Map((before ?? []).map((j) => [j.job, j.state]));
  const changes: string[] = [];
  for (const j of after) {
    const was = old.get(j.job);
    if (was === undefined) changes.push(`job ${quoteValue(j.job)} ${j.state === 'running' ? 'started' : j.state}`);
    else if (was !== j.state) changes.push(`job ${quoteValue(j.job)} ${was} -> ${j.state}`);
    old.delete(j.job);
  }
  for (const id of old.keys()) changes.push(`job ${quoteValue(id)} gone`);
  return changes;
}

/** One line about a computer's identity: `advanced turtle, CC 1.109.0, mcp-computer 0.1.0`. */
export function identityLine(identity: Identity, version: string | null): string {
  const what = identity.kind === null ? 'computer (kind not said)' : `${identity.advanced === true ? 'advanced ' : identity.advanced === false ? 'basic ' : ''}${identity.kind}`;
  const parts = [what];
  // each as dataText shows it: a computer chooses them, and a line break would start another computer's line
  if (identity.ccVersion !== null) parts.push(`CC ${dataText(identity.ccVersion)}`);
  if (identity.host !== null) parts.push(`_HOST ${quoteWhole(identity.host)}`);
  parts.push(version === null ? 'mcp-computer version not said' : `mcp-computer ${dataText(version)}`);
  return parts.join(', ');
}

export function peripheralsLine(peripherals: Peripheral[] | null): string {
  if (peripherals === null) return 'peripherals not said';
  if (peripherals.length === 0) return 'no peripherals';
  return `peripherals: ${peripherals.map((p) => `${dataText(p.name)} (${p.types.map(dataText).join(', ') || 'no type'})`).join(', ')}`;
}

/** The jobs part of a list-computers line; empty when there are none or the program does not say. */
export function jobsLine(jobs: readonly JobInfo[] | null): string {
  if (jobs === null || jobs.length === 0) return '';
  return `; jobs: ${jobs.map((j) => `${dataText(j.job)} ${j.state} (${dataText(j.kind)}: ${dataText(j.what)})`).join(', ')}`;
}
