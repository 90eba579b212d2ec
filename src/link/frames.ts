// Pure validation of the frames a computer may send, and the bridge's answers to a hello. The
// request and cancel frames the bridge sends are encoded in request-frames.ts (re-exported here).
import { DEFAULT_MAX_JSON_DEPTH, aJsonType, boundsProblem } from '../jsonrpc/bounds.js';
import { parseIdentity, parseJobs, parseOmitted, parsePeripherals, withSkipped, type Identity, type JobInfo, type Omitted, type Peripheral } from './identity.js';

export { LuaParams, REQUEST_HEAD, asciiJson, encodeCancel, encodeRequest, requestEncoder, requestTail } from './request-frames.js';

export interface HelloFrame {
  type: 'hello';
  computerId: number;
  computerLabel: string | null;
  version: string | null;
  /** The link token the computer sent (CC_LINK_TOKEN), or null; never logged. */
  token: string | null;
  /** The computer's own key (mcp-computer's `mcp.key`), which pins its id (CC_LINK_PIN), or null; never logged. */
  key: string | null;
  /** Largest frame the computer sends and takes (its --max-frame), when it says. */
  maxFrame?: number;
  /** What the computer is (kind, advanced, _HOST, CC version, peripherals); null where not said. */
  identity: Identity;
  /** What the bridge cut of `identity` to keep it (LinkRegistry.fitHello); absent when nothing. */
  identityCut?: Omitted;
}

/** A change of label, peripherals or jobs after the hello: the computer's whole current set of each. */
export interface InfoFrame {
  type: 'info';
  computerLabel: string | null;
  peripherals: Peripheral[];
  /** Its detached jobs; left out by a program that does not say. */
  jobs?: readonly JobInfo[];
  /** What it left out of the lists to fit its --max-frame; absent when nothing. */
  omitted?: Omitted;
}

export interface ResponseFrame {
  type: 'response';
  id: string;
  ok: boolean;
  result?: unknown;
  error?: string;
}

export type ComputerFrame = HelloFrame | ResponseFrame | InfoFrame;

/**
 * A failed parse of a response frame whose `id` is still usable carries it, so the request it answers
 * fails at once with the protocol error instead of waiting for its timeout.
 */
export type FrameParse = { ok: true; frame: ComputerFrame } | { ok: false; error: string; id?: string };

const MAX_ID_LENGTH = 128;
/** Smallest --max-frame mcp-computer accepts. */
const MIN_MAX_FRAME = 1024;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Parses and checks one text frame. `maxDepth` bounds its nesting before anything walks it, so no
 * frame can overflow the stack of the code that later validates, logs or serialises its values.
 * Errors never quote the frame: they name at most a field and its JSON type.
 */
export function parseComputerFrame(text: string, maxDepth: number = DEFAULT_MAX_JSON_DEPTH): FrameParse {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, error: 'frame is not valid JSON' };
  }
  // nesting d levels takes 2d characters at least: a text shorter than 2 * (maxDepth + 1) cannot be
  // too deep, so most frames (every answer to a ping, a short exec-lua result) are not walked
  const problem = text.length < 2 * (maxDepth + 1) ? null : boundsProblem(value, { maxDepth });
  if (problem) return withId({ ok: false, error: `frame ${problem}` }, value);
  if (!isRecord(value)) return { ok: false, error: `frame is not a JSON object (it is ${aJsonType(value)})` };
  switch (value.type) {
    case 'hello':
      return parseHello(value);
    case 'response':
      return withId(parseResponse(value), value);
    case 'info':
      return parseInfo(value);
    default:
      return {
        ok: false,
        error: value.type === undefined ? 'frame has no type ("hello", "response" or "info")' : `unknown frame type (${aJsonType(value.type)} other than "hello", "response" or "info")`,
      };
  }
}

/** Adds the id of a malformed response frame when it is a plain, valid one (never walks the frame). */
function withId(parse: FrameParse, value: unknown): FrameParse {
  if (parse.ok || !isRecord(value) || value.type !== 'response' || !validId(value.id)) return parse;
  return { ...parse, id: value.id };
}

function validId(id: unknown): id is string {
  return typeof id === 'string' && id !== '' && id.length <= MAX_ID_LENGTH;
}

/** Shortest and longest computer key (mcp-computer sends 32 characters). */
export const MIN_KEY_LENGTH = 16;
export const MAX_KEY_LENGTH = 128;
const KEY_CHARS = /^[A-Za-z0-9_-]*$/;

/** Longest computer label a hello or info frame may carry. */
export const MAX_LABEL = 1024;
/** Longest mcp-computer version a hello may carry (as long as its _HOST and CC version texts; mcp-computer sends "0.1.0"). */
const MAX_VERSION = 256;

/** A hello's `key`: absent or null (no key), or 16-128 characters of A-Z a-z 0-9 _ -. Errors never echo it. */
export function parseKey(value: unknown): { ok: true; key: string | null } | { ok: false; error: string } {
  if (value === undefined || value === null) return { ok: true, key: null };
  if (typeof value !== 'string') return { ok: false, error: `hello.key must be a string (got ${aJsonType(value)})` };
  if (value.length < MIN_KEY_LENGTH || value.length > MAX_KEY_LENGTH) {
    return { ok: false, error: `hello.key must be ${MIN_KEY_LENGTH} to ${MAX_KEY_LENGTH} characters long (got ${value.length})` };
  }
  if (!KEY_CHARS.test(value)) return { ok: false, error: 'hello.key may hold only the characters A-Z a-z 0-9 _ -' };
  return { ok: true, key: value };
}

function parseHello(value: Record<string, unknown>): FrameParse {
  const id = value.computerId;
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 0) {
    return { ok: false, error: 'hello.computerId must be an integer >= 0' };
  }
  const label = typeof value.computerLabel === 'string' && value.computerLabel !== '' ? value.computerLabel : null;
  // as long as an info frame's may be (CC itself keeps labels to 32 characters)
  if (label !== null && label.length > MAX_LABEL) return { ok: false, error: `hello.computerLabel must be at most ${MAX_LABEL} characters (got ${label.length})` };
  const version = typeof value.version === 'string' && value.version !== '' ? value.version : null;
  // shown whole in list-computers and probe answers: refused, like a long label, rather than cut
  if (version !== null && version.length > MAX_VERSION) return { ok: false, error: `hello.version must be at most ${MAX_VERSION} characters (got ${version.length})` };
  const token = typeof value.token === 'string' ? value.token : null;
  const key = parseKey(value.key);
  if (!key.ok) return key;
  const identity = parseIdentity(value);
  if (!identity.ok) return { ok: false, error: identity.error };
  const frame: HelloFrame = { type: 'hello', computerId: id, computerLabel: label, version, token, key: key.key, identity: identity.value };
  const maxFrame = value.maxFrame;
  if (maxFrame !== undefined) {
    if (typeof maxFrame !== 'number' || !Number.isSafeInteger(maxFrame) || maxFrame < MIN_MAX_FRAME) {
      return { ok: false, error: `hello.maxFrame must be an integer >= ${MIN_MAX_FRAME}` };
    }
    frame.maxFrame = maxFrame;
  }
  return { ok: true, frame };
}

function parseInfo(value: Record<string, unknown>): FrameParse {
  const label = value.computerLabel;
  if (label !== null && (typeof label !== 'string' || label.length > MAX_LABEL)) return { ok: false, error: 'info.computerLabel must be a string or null' };
  const peripherals = parsePeripherals(value.peripherals, 'info.peripherals');
  if (!peripherals.ok) return { ok: false, error: peripherals.error };
  const frame: InfoFrame = { type: 'info', computerLabel: label === '' ? null : label, peripherals: peripherals.value };
  let skippedJobs = 0;
  if (value.jobs !== undefined) {
    const jobs = parseJobs(value.jobs, 'info.jobs');
    if (!jobs.ok) return { ok: false, error: jobs.error };
    frame.jobs = jobs.value;
    skippedJobs = jobs.skipped;
  }
  const said = parseOmitted(value.omitted, 'info.omitted');
  if (!said.ok) return { ok: false, error: said.error };
  // entries over an entry size were left out by the parse: counted with what the computer left out
  const omitted = withSkipped(said.value, peripherals.skipped, skippedJobs);
  if (omitted !== undefined) frame.omitted = omitted;
  return { ok: true, frame };
}

function parseResponse(value: Record<string, unknown>): FrameParse {
  const { id, ok } = value;
  if (!validId(id)) {
    return { ok: false, error: 'response.id must be a non-empty string' };
  }
  if (typeof ok !== 'boolean') return { ok: false, error: 'response.ok must be a boolean' };
  if (!ok && typeof value.error !== 'string') {
    return { ok: false, error: 'response.error must be a string when ok is false' };
  }
  const frame: ResponseFrame = { type: 'response', id, ok };
  if ('result' in value) frame.result = value.result;
  if (!ok) frame.error = value.error as string;
  return { ok: true, frame };
}

/**
 * hello-ok, with the largest frame the bridge takes from a computer (CC_MAX_FRAME_BYTES): the computer
 * sizes its frames to the smaller of it and its --max-frame (an older program ignores the field); and
 * the most bytes of JSON it keeps of a computer's identity (CC_MAX_IDENTITY_BYTES), to which the computer
 * fits its info frames and later hellos too (absent when unbounded).
 */
export function encodeHelloOk(maxFrame: number, maxIdentity = Infinity): string {
  return JSON.stringify(maxIdentity === Infinity ? { type: 'hello-ok', maxFrame } : { type: 'hello-ok', maxFrame, maxIdentity });
}

/**
 * Why a hello was refused, for the computer to act on: `unauthorized` (wrong or missing token: stop
 * and ask the player), `busy` (a limit; retry later with backoff), `invalid` (a malformed hello),
 * `key_mismatch` (the computer id is pinned to another key, or to a key this hello lacks: stop; only the
 * bridge's operator can reset it), `not_enrolled` (CC_LINK_PIN=strict and the id is not pinned nor open
 * for enrollment: stop; the operator enrolls it).
 */
export type HelloErrorCode = 'unauthorized' | 'busy' | 'invalid' | 'key_mismatch' | 'not_enrolled';

export function encodeHelloError(error: string, code: HelloErrorCode = 'invalid'): string {
  return JSON.stringify({ type: 'hello-error', error, code });
}
