// POST bodies are JSON: a request whose Content-Type is present and names another media type is
// refused with 415 before its body is read. Defence in depth beside the Origin check (http.ts): the
// media types a browser may send cross-site without a CORS preflight (text/plain, form types) are
// never JSON. A missing Content-Type is accepted: curl -X POST without a body sends none, and a
// browser can send none only from script (fetch/XHR with an untyped body), which always carries an
// Origin header, so the Origin check sees it.

/** A JSON media type: application/json, or any `type/subtype+json`; parameters (charset ...) ignored. */
const JSON_TYPE = /^\s*(?:application\/json|[!#$%&'*.^`|~\w-]+\/[!#$%&'*.^`|~\w+-]+\+json)\s*(?:;|$)/i;

// a client sends the same Content-Type on every request: the last answer is kept (hot path: a
// string compare instead of a regex test per call)
let lastType: string | undefined;
let lastProblem: string | null = null;

/**
 * Why a POST with this Content-Type header is refused (415), or null when it may go on: no header,
 * or a JSON media type with any parameters. The reason names the header and what to send instead.
 */
export function contentTypeProblem(header: string | undefined): string | null {
  if (header === undefined) return null;
  if (header === lastType) return lastProblem;
  const problem = JSON_TYPE.test(header)
    ? null
    : `Unsupported Media Type: the Content-Type header is ${JSON.stringify(header.length > 100 ? `${header.slice(0, 100)}...` : header)}; the body must be JSON, sent with Content-Type: application/json (curl: --json, or -H 'content-type: application/json')`;
  lastType = header;
  lastProblem = problem;
  return problem;
}

/** Answer headers of the 415: which media type would have been taken (RFC 9110 15.5.16), and the connection closed, so its body is not read. */
export const UNSUPPORTED_MEDIA_HEADERS: Readonly<Record<string, string>> = Object.freeze({ accept: 'application/json', connection: 'close' });
