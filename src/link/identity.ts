// What a computer says it is (hello fields) and what it says when that changes (info frame): pure
// validation. A program older than these fields sends none of them: each is then null.

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
