// CC_MAX_IDENTITY_BYTES: how much of what a computer says it is (identity.ts) the bridge keeps. An
// identity over the budget is cut to whole entries, and what was cut is counted in its `omitted` marker.
import { MAX_JOBS, MAX_PERIPHERALS, NO_JOBS, type Identity, type Omitted } from './identity.js';

/** Smallest CC_MAX_IDENTITY_BYTES: an identity with no peripherals and no jobs always fits it. */
export const MIN_IDENTITY_BYTES = 4096;

/** UTF-8 bytes of `value`'s JSON: what CC_MAX_IDENTITY_BYTES counts. */
export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? '');
}

/** The marker at its largest (counts below ten million: a frame's are at most a million, plus what the bridge cuts). */
const WIDEST_OMITTED: Omitted = { peripherals: 9_999_999, jobs: 9_999_999, budget: true };

/**
 * More than the identity's JSON can be, counted without writing it: every character of a string at
 * most 6 bytes (a \uXXXX escape), plus room for the quotes, keys and punctuation around each value.
 * Most identities are far below the budget by this count, so they are never serialised to be measured.
 */
export function sizeBound(identity: Identity): number {
  let n = 256 + 6 * ((identity.host?.length ?? 0) + (identity.ccVersion?.length ?? 0));
  for (const p of identity.peripherals ?? []) {
    n += 24 + 6 * p.name.length;
    for (const t of p.types) n += 3 + 6 * t.length;
  }
  for (const j of identity.jobs ?? []) n += 48 + 6 * (j.job.length + j.kind.length + j.what.length);
  return n;
}

/**
 * `identity` cut to `budget` bytes of JSON (CC_MAX_IDENTITY_BYTES) and to at most MAX_PERIPHERALS
 * peripherals and MAX_JOBS jobs, for the bridge to keep: whole
 * entries in the order the computer sent them, jobs first up to an eighth of the budget (as mcp-computer
 * budgets its own frames), then peripherals while they fit, then further jobs while they fit. What
 * was cut is added to its `omitted` marker (with `budget`). The identity itself when it fits (most);
 * otherwise a new one holding new, shorter lists, so nothing keeps the frame's longer ones alive.
 * `budget` is at least MIN_IDENTITY_BYTES.
 */
export function fitIdentity(identity: Identity, budget: number): { identity: Identity; cut: Omitted | null } {
  const peripherals = identity.peripherals ?? [];
  const jobs = identity.jobs ?? NO_JOBS;
  // a list longer than MAX_PERIPHERALS / MAX_JOBS (the frame holds it; a rich hello is never refused) is cut too
  if (peripherals.length <= MAX_PERIPHERALS && jobs.length <= MAX_JOBS && sizeBound(identity) <= budget) return { identity, cut: null };
  // the lists empty and the marker at its widest: what the rest of the identity takes
  const base = { ...identity, peripherals: identity.peripherals === null ? null : [], jobs: identity.jobs === null ? null : [], omitted: WIDEST_OMITTED };
  let used = jsonBytes(base);
  let keptJobs = 0;
  const takeJobs = (limit: number) => {
    while (keptJobs < jobs.length && keptJobs < MAX_JOBS) {
      const size = jsonBytes(jobs[keptJobs]) + 1;
      if (used + size > limit) return;
      used += size;
      keptJobs++;
    }
  };
  takeJobs(used + Math.floor(budget / 8));
  let keptPeripherals = 0;
  while (keptPeripherals < peripherals.length && keptPeripherals < MAX_PERIPHERALS) {
    const size = jsonBytes(peripherals[keptPeripherals]) + 1;
    if (used + size > budget) break;
    used += size;
    keptPeripherals++;
  }
  takeJobs(budget);
  if (keptPeripherals === peripherals.length && keptJobs === jobs.length) return { identity, cut: null };
  const cut: Omitted = { peripherals: peripherals.length - keptPeripherals, jobs: jobs.length - keptJobs, budget: true };
  const fitted: Identity = {
    ...identity,
    peripherals: identity.peripherals === null ? null : peripherals.slice(0, keptPeripherals),
    jobs: identity.jobs === null ? null : keptJobs === 0 ? NO_JOBS : jobs.slice(0, keptJobs),
    omitted: { peripherals: (identity.omitted?.peripherals ?? 0) + cut.peripherals, jobs: (identity.omitted?.jobs ?? 0) + cut.jobs, budget: true },
  };
  return { identity: fitted, cut };
}
