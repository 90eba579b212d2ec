// What a computer says it is (hello fields) and what it says when that changes (info frame): pure
// validation. A program older than these fields sends none of them: each is then null.
import { dataText, quoteValue, quoteWhole } from '../jsonrpc/quote.js';
import { plural } from '../plural.js';

export const KINDS = ['computer', 'turtle', 'pocket', 'command'] as const;
export type ComputerKind = (typeof KINDS)[number];

export interface Peripheral {
  name: string;
  types: string[];
}

export const JOB_STATES = ['running', 'done', 'failed', 'cancelled'] as const;
export type JobState = (typeof JOB_STATES)[number];

/** A detached job the computer has (exec-lua or run-program with detach:true), as its hello or info frame lists it. */
export interface JobInfo {
  job: string;
  kind: string;
  state: JobState;
  /** The start of its code or command line. */
  what: string;
}

export interface Identity {
  kind: ComputerKind | null;
  advanced: boolean | null;
  /** _HOST, e.g. "ComputerCraft 1.109.0 (Minecraft 1.20.1)". */
  host: string | null;
  ccVersion: string | null;
  peripherals: Peripheral[] | null;
  /** Its detached jobs (kept current by info frames); null from a program that does not say. */
  jobs: readonly JobInfo[] | null;
  /** How many peripherals and jobs the computer left out of its last hello or info frame to fit its --max-frame; absent when none. */
  omitted?: Omitted;
}

/**
 * What a hello or info frame left out to fit the computer's frame limit ("omitted": {peripherals, jobs}),
 * plus what the bridge left out of it to fit CC_MAX_IDENTITY_BYTES (`budget` set when it did).
 */
export interface Omitted {
  peripherals: number;
  jobs: number;
  /** The bridge cut the lists to its identity budget (CC_MAX_IDENTITY_BYTES); absent when only the computer did. */
  budget?: true;
}

export const UNKNOWN_IDENTITY: Identity = { kind: null, advanced: null, host: null, ccVersion: null, peripherals: null, jobs: null };

/** Most jobs the bridge keeps of a frame's list (mcp-computer keeps at most 16); fitIdentity counts the rest in `omitted`. */
export const MAX_JOBS = 64;
const MAX_JOB_ID = 128;
const MAX_JOB_KIND = 64;

/** Most peripherals the bridge keeps of a frame's list (mcp-computer sends at most 256); fitIdentity counts the rest in `omitted`. */
export const MAX_PERIPHERALS = 1024;
const MAX_NAME = 256;
const MAX_TYPES = 32;
const MAX_TEXT = 256;

/**
 * One copy of each string many computers send alike (_HOST, peripheral types), shared by every link
 * that says it: JSON.parse makes a new string per hello for all but the shortest. Holds at most
 * INTERNED distinct strings (then new ones are kept as they came), so peers cannot grow it.
 */
const INTERNED = 1024;
const interned = new Map<string, string>();
export function intern(value: string): string {
  const known = interned.get(value);
  if (known !== undefined) return known;
  if (interned.size < INTERNED) interned.set(value, value);
  return value;
}

type Parse<T> = { ok: true; value: T } | { ok: false; error: string };
/** A list parse: the entries kept, and how many well-formed entries were left out for being over an entry size. */
type ListParse<T> = { ok: true; value: T; skipped: number } | { ok: false; error: string };

function text(value: unknown, where: string): Parse<string | null> {
  if (value === undefined || value === null) return { ok: true, value: null };
  if (typeof value !== 'string' || value.length > MAX_TEXT) return { ok: false, error: `${where} must be a string of at most ${MAX_TEXT} characters` };
  return { ok: true, value };
}

/**
 * A peripheral list: [{name, types: [string]}], names unique; errors name the field only. A
 * well-formed entry over an entry size (a name or type over MAX_NAME characters, more than MAX_TYPES
 * types) is left out and counted in `skipped`, as entries over CC_MAX_IDENTITY_BYTES are: the
 * identity budget bounds what is kept, so refusing the whole hello (before: the computer could not
 * link at all for one odd peripheral) protected nothing.
 */
export function parsePeripherals(value: unknown, where: string): ListParse<Peripheral[]> {
  if (!Array.isArray(value)) return { ok: false, error: `${where} must be an array` };
  const seen = new Set<string>();
  // sized up front: a list grown by push keeps room for 17 (152 B for two peripherals, per link)
  let list = new Array<Peripheral>(value.length);
  let kept = 0;
  for (let i = 0; i < value.length; i++) {
    const p: unknown = value[i];
    const at = `${where}[${i}]`;
    if (typeof p !== 'object' || p === null || Array.isArray(p)) return { ok: false, error: `${at} must be an object {name, types}` };
    const { name, types } = p as Record<string, unknown>;
    if (typeof name !== 'string' || name === '') return { ok: false, error: `${at}.name must be a non-empty string` };
    if (seen.has(name)) return { ok: false, error: `${at}.name repeats an earlier peripheral's name` };
    seen.add(name);
    if (!Array.isArray(types) || types.some((t) => typeof t !== 'string' || t === '')) {
      return { ok: false, error: `${at}.types must be an array of non-empty strings` };
    }
    if (name.length > MAX_NAME || types.length > MAX_TYPES || (types as string[]).some((t) => t.length > MAX_NAME)) continue;
    list[kept++] = { name, types: (types as string[]).map(intern) };
  }
  if (kept < list.length) list = list.slice(0, kept);
  return { ok: true, value: list, skipped: value.length - kept };
}

/** A frame's "omitted" marker: absent, or {peripherals?, jobs?} counts (at most a million each); none left out is absent. */
export function parseOmitted(value: unknown, where: string): Parse<Omitted | undefined> {
  if (value === undefined || value === null) return { ok: true, value: undefined };
  const bad = { ok: false as const, error: `${where} must be an object {peripherals, jobs} of counts` };
  if (typeof value !== 'object' || Array.isArray(value)) return bad;
  const { peripherals = 0, jobs = 0 } = value as Record<string, unknown>;
  const count = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 && n <= 1_000_000;
  if (!count(peripherals) || !count(jobs)) return bad;
  return { ok: true, value: peripherals === 0 && jobs === 0 ? undefined : { peripherals, jobs } };
}

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

/** The job list of every computer that has none (most): one shared, frozen empty array. */
export const NO_JOBS: readonly JobInfo[] = Object.freeze([]);

/**
 * A job list: [{job, kind, state, what}], ids unique; errors name the field only. A well-formed job
 * over an entry size (an id over MAX_JOB_ID characters, a kind over MAX_JOB_KIND, a `what` over
 * MAX_TEXT) is left out and counted in `skipped`, as parsePeripherals does.
 */
export function parseJobs(value: unknown, where: string): ListParse<readonly JobInfo[]> {
  if (!Array.isArray(value)) return { ok: false, error: `${where} must be an array` };
  if (value.length === 0) return { ok: true, value: NO_JOBS, skipped: 0 };
  const seen = new Set<string>();
  let list = new Array<JobInfo>(value.length); // sized up front, as the peripheral list
  let kept = 0;
  for (let i = 0; i < value.length; i++) {
    const j: unknown = value[i];
    const at = `${where}[${i}]`;
    if (typeof j !== 'object' || j === null || Array.isArray(j)) return { ok: false, error: `${at} must be an object {job, kind, state, what}` };
    const { job, kind, state, what } = j as Record<string, unknown>;
    if (typeof job !== 'string' || job === '') return { ok: false, error: `${at}.job must be a non-empty string` };
    if (seen.has(job)) return { ok: false, error: `${at}.job repeats an earlier job's id` };
    seen.add(job);
    if (typeof kind !== 'string' || kind === '') return { ok: false, error: `${at}.kind must be a non-empty string` };
    if (!JOB_STATES.includes(state as JobState)) return { ok: false, error: `${at}.state must be one of ${JOB_STATES.join(', ')}` };
    if (typeof what !== 'string') return { ok: false, error: `${at}.what must be a string` };
    if (job.length > MAX_JOB_ID || kind.length > MAX_JOB_KIND || what.length > MAX_TEXT) continue;
    list[kept++] = { job, kind: intern(kind), state: state as JobState, what };
  }
  if (kept === 0) return { ok: true, value: NO_JOBS, skipped: value.length };
  if (kept < list.length) list = list.slice(0, kept);
  return { ok: true, value: list, skipped: value.length - kept };
}

/**
 * A frame's `omitted` marker with what the parse left out for being over an entry size added: those
 * the bridge left out, so `budget` is set (list-computers: "... or the bridge's CC_MAX_IDENTITY_BYTES").
 */
export function withSkipped(omitted: Omitted | undefined, peripherals: number, jobs: number): Omitted | undefined {
  if (peripherals === 0 && jobs === 0) return omitted;
  return { peripherals: (omitted?.peripherals ?? 0) + peripherals, jobs: (omitted?.jobs ?? 0) + jobs, budget: true };
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

/** The identity fields of a hello (each optional). */
export function parseIdentity(hello: Record<string, unknown>): Parse<Identity> {
  const { kind, advanced } = hello;
  if (kind !== undefined && kind !== null && !KINDS.includes(kind as ComputerKind)) {
    return { ok: false, error: `hello.kind must be one of ${KINDS.join(', ')}` };
  }
  if (advanced !== undefined && advanced !== null && typeof advanced !== 'boolean') return { ok: false, error: 'hello.advanced must be a boolean' };
  const host = text(hello.host, 'hello.host');
  if (!host.ok) return host;
  const ccVersion = text(hello.ccVersion, 'hello.ccVersion');
  if (!ccVersion.ok) return ccVersion;
  let peripherals: Peripheral[] | null = null;
  let skippedPeripherals = 0;
  if (hello.peripherals !== undefined && hello.peripherals !== null) {
    const parsed = parsePeripherals(hello.peripherals, 'hello.peripherals');
    if (!parsed.ok) return parsed;
    peripherals = parsed.value;
    skippedPeripherals = parsed.skipped;
  }
  let jobs: readonly JobInfo[] | null = null;
  let skippedJobs = 0;
  if (hello.jobs !== undefined && hello.jobs !== null) {
    const parsed = parseJobs(hello.jobs, 'hello.jobs');
    if (!parsed.ok) return parsed;
    jobs = parsed.value;
    skippedJobs = parsed.skipped;
  }
  const said = parseOmitted(hello.omitted, 'hello.omitted');
  if (!said.ok) return said;
  const omitted = { value: withSkipped(said.value, skippedPeripherals, skippedJobs) };
  const value: Identity = {
    kind: (kind as ComputerKind | undefined) ?? null,
    advanced: (advanced as boolean | undefined) ?? null,
    host: host.value === null ? null : intern(host.value),
    ccVersion: ccVersion.value === null ? null : intern(ccVersion.value),
    peripherals,
    jobs,
  };
  if (omitted.value !== undefined) value.omitted = omitted.value;
  return { ok: true, value };
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
