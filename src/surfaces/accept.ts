// Content negotiation for MCP answers: JSON unless the client's Accept takes only an event stream.

/** Media ranges an Accept header lists with a non-zero q, lower-cased, parameters dropped. */
function acceptedRanges(accept: string): string[] {
  const ranges: string[] = [];
  for (const part of accept.split(',')) {
    const [range = '', ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    if (range === '' || (q !== undefined && Number(q.slice(2)) === 0)) continue;
    ranges.push(range);
  }
  return ranges;
}

// a client sends the same Accept on every request: the last answer is kept (issue 16: parsing it
// allocated about 3% of what a probe call does)
let lastAccept: string | undefined;
let lastWants = false;

/** True when Accept lists text/event-stream and nothing that covers application/json. */
export function wantsEventStream(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  if (accept === lastAccept) return lastWants;
  const ranges = acceptedRanges(accept);
  const json = ranges.some((r) => r === 'application/json' || r === 'application/*' || r === '*/*');
  lastWants = !json && ranges.includes('text/event-stream');
  lastAccept = accept;
  return lastWants;
}

/** True when Accept lists text/event-stream (a Streamable HTTP client lists it with application/json). */
export function acceptsEventStream(accept: string | undefined): boolean {
  return accept !== undefined && acceptedRanges(accept).includes('text/event-stream');
}
