// What the pin tests share: a key's digest as the pins file holds it, one keyed (or keyless) hello
// from a fake computer, and a plain HTTP request to the operator routes (/pins).
import { createHash } from 'node:crypto';
import { FakeComputer } from '../helpers.js';

/** SHA-256 hex of a key, as CC_LINK_PINS_FILE holds it. */
export const sha = (key) => createHash('sha256').update(key).digest('hex');

/** A fake computer's hello for `computerId` with `key` (none when undefined); its first answer. */
export async function attempt(bridge, computerId, key) {
  const c = new FakeComputer(bridge.linkUrl, { computerId });
  const first = await c.link({ type: 'hello', computerId, ...(key === undefined ? {} : { key }) });
  return { c, first };
}

/** `path` on the bridge's MCP listener (a POST unless told); the answer's status, headers and JSON. */
export async function request(bridge, path, { method = 'POST', headers = {}, body } = {}) {
  const res = await fetch(bridge.mcpUrl.replace(/\/mcp$/, '') + path, { method, headers, body });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text === '' ? null : JSON.parse(text) };
}
