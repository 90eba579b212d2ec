// The request and cancel frames the bridge sends a computer (pure): JSON with every non-ASCII character
// escaped, a request's tail written once per method (or by template for a Lua chunk) and its id spliced in.
import { isPlainText } from '../jsonrpc/written.js';

const NON_ASCII = /[\u0080-\uffff]/g;
const HAS_NON_ASCII = /[\u0080-\uffff]/;

/**
 * JSON with every non-ASCII character as a \uXXXX escape: CC before 1.109 does not hand websocket text
 * to Lua as UTF-8 bytes, and escapes decode the same on every version.
 */
export function asciiJson(value: unknown): string {
  const text = JSON.stringify(value);
  return HAS_NON_ASCII.test(text)
    ? text.replace(NON_ASCII, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
    : text;
}

/**
 * The params of a Lua chunk's request (exec-lua, config Lua tools): `{code}`, or `{code, args}` with
 * `args` as data beside the chunk. They serialise as that object would; encodeRequest writes them
 * into the frame by a template, without JSON.stringify walking the frame object (about a third of
 * a microsecond, in every exec-lua call).
 */
export class LuaParams {
  constructor(
    readonly code: string,
    readonly args?: Record<string, unknown>,
  ) {}
}

export const REQUEST_HEAD = '{"type":"request","id":"';

/** An id or method that JSON writes as it is, between quotes (request ids are base64url). */
const PLAIN = /^[\w-]+$/;

/**
 * Methods found PLAIN: a request's method is one of the bridge's own names (exec-lua, the safe tools'
 * methods), so each is tested once instead of in every request (a regex test is ~0.1 us).
 */
const PLAIN_METHODS = new Set<string>();
const MAX_PLAIN_METHODS = 256;

function plainMethod(method: string): boolean {
  if (PLAIN_METHODS.has(method)) return true;
  if (!PLAIN.test(method)) return false;
  if (PLAIN_METHODS.size < MAX_PLAIN_METHODS) PLAIN_METHODS.add(method);
  return true;
}

/** The method of the last Lua chunk's request and the tail's text up to its code, with and without the code's opening quote. */
let luaMethod = '';
let luaHead = '';
let luaHeadQuoted = '';

/**
 * A Lua chunk's request after its id (the method is PLAIN): its params written by template, in as few
 * pieces as can be (each `+` makes a node of a string tree that is copied flat when the frame is
 * written): the text before the code is kept for the last method (exec-lua's, nearly always).
 */
function luaTail(method: string, params: LuaParams): string {
  if (method !== luaMethod) {
    luaHead = `","method":"${method}","params":{"code":`;
    luaHeadQuoted = `${luaHead}"`;
    luaMethod = method;
  }
  const code = params.code;
  // a one-line chunk without quotes (`return os.time()`) needs no JSON.stringify and no second scan;
  // any other fails the test at its first line end or quote, cheaply
  if (params.args === undefined) return isPlainText(code) ? luaHeadQuoted + code + '"}}' : luaHead + asciiJson(code) + '}}';
  const args = `,"args":${asciiJson(params.args)}}}`;
  return isPlainText(code) ? luaHeadQuoted + code + '"' + args : luaHead + asciiJson(code) + args;
}

export function encodeRequest(id: string, method: string, params?: unknown): string {
  if (params instanceof LuaParams && PLAIN.test(id) && plainMethod(method)) return REQUEST_HEAD + id + luaTail(method, params);
  return asciiJson(params === undefined ? { type: 'request', id, method } : { type: 'request', id, method, params });
}

/** Tails of requests without params, by method (a probe sends the same ping every time). */
const TAILS = new Map<string, string>();

/**
 * The request frame without `REQUEST_HEAD` and the id: `REQUEST_HEAD + id + tail` is `encodeRequest`'s
 * frame, for ids that need no JSON escaping (base64url). A probe sends the same request to every
 * computer: it is encoded once (once per method, when it has no params), each id spliced in; a single
 * request (registry.ts) splices its id the same way, so its id is never tested again.
 */
export function requestTail(method: string, params?: unknown): string {
  const known = params === undefined ? TAILS.get(method) : undefined;
  if (known !== undefined) return known;
  if (params instanceof LuaParams && plainMethod(method)) return luaTail(method, params);
  const tail = encodeRequest('', method, params).slice(REQUEST_HEAD.length);
  // only the bridge's own methods come here without params: the map stays tiny
  if (params === undefined) TAILS.set(method, tail);
  return tail;
}

/** `encodeRequest` for many ids at once: `requestTail` spliced after each id. */
export function requestEncoder(method: string, params?: unknown): (id: string) => string {
  const tail = requestTail(method, params);
  return (id) => REQUEST_HEAD + id + tail;
}

export function encodeCancel(id: string): string {
  return JSON.stringify({ type: 'cancel', id });
}
