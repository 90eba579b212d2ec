// Redirects from an upstream MCP server over HTTP: followed only within the configured URL's origin
// (scheme, host and port). fetch's own following would re-send the configured `headers` (an
// `X-Api-Key`, a cookie ... ; undici drops only Authorization) with the session id and the request
// body (tool arguments) to whatever origin a Location names, so a server that is compromised, or a
// proxy in front of it, could collect them. A redirect to another origin fails the request with
// CrossOriginRedirectError instead, naming both origins.

/** Most redirects followed for one request: fetch's own limit (its spec's 20), unchanged. */
export const MAX_REDIRECTS = 20;

export class CrossOriginRedirectError extends Error {
  readonly code = 'ERR_UPSTREAM_REDIRECT';
  constructor(
    readonly from: string,
    readonly to: string,
  ) {
    super(
      `the server at ${from} redirected to another origin, ${to}; not followed, so the configured headers, the session id and the request body stay with ${from} ` +
        `(if ${to} is the server's new address and you trust it, put its URL in the config)`,
    );
    this.name = 'CrossOriginRedirectError';
  }
}

export class TooManyRedirectsError extends Error {
  readonly code = 'ERR_UPSTREAM_REDIRECT';
  constructor(from: string) {
    super(`the server at ${from} redirected more than ${MAX_REDIRECTS} times in a row`);
    this.name = 'TooManyRedirectsError';
  }
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Headers that describe a body; dropped with the body when a redirect turns a POST into a GET (as fetch does). */
const BODY_HEADERS = ['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location'];

/**
 * fetch(`url`, `init`) following redirects to the same origin only (as fetch would: 307 and 308 keep
 * the method and body, 303, and 301 or 302 after a POST, become a body-less GET), at most
 * MAX_REDIRECTS. A 3xx without a usable Location is returned as it is.
 */
export async function fetchSameOrigin(url: string, init: RequestInit & { body?: string }): Promise<Response> {
  const origin = new URL(url).origin;
  let current = url;
  let method = (init.method ?? 'GET').toUpperCase();
  let body = init.body;
  let headers: Record<string, string> = { ...(init.headers as Record<string, string> | undefined) };
  for (let hops = 0; ; hops++) {
    const res = await fetch(current, { ...init, method, headers, ...(body === undefined ? { body: null } : { body }), redirect: 'manual' });
    if (!REDIRECT_STATUSES.has(res.status)) return res;
    const location = res.headers.get('location');
    let next: URL;
    try {
      if (location === null) return res;
      next = new URL(location, current);
    } catch {
      return res;
    }
    await res.body?.cancel();
    if (next.origin !== origin) throw new CrossOriginRedirectError(shownOrigin(url), shownOrigin(next.href));
    if (hops >= MAX_REDIRECTS) throw new TooManyRedirectsError(shownOrigin(url));
    if (res.status === 303 ? method !== 'GET' && method !== 'HEAD' : (res.status === 301 || res.status === 302) && method === 'POST') {
      method = 'GET';
      body = undefined;
      headers = Object.fromEntries(Object.entries(headers).filter(([name]) => !BODY_HEADERS.includes(name.toLowerCase())));
    }
    current = next.href;
  }
}

/** An origin as messages show it: scheme, host and port; never a user or password, path or query (they may hold a key). */
function shownOrigin(url: string): string {
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.host}`;
}
