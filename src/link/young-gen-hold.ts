// While computers link in a burst (a Minecraft server that restarts relinks all its computers at
// once), V8's young generation is kept from growing past a bound. V8 grows it (up to 16 MB a
// semi-space, 32 MB in all) when many objects survive its scavenges, and that is all linking does:
// a link's objects live as long as the link, so a bigger young generation only delays their
// promotion, and it keeps the pages it grew (~25 MB after 10,000 links) until ~5 s of low allocation
// have passed. Growth is allowed again QUIET_MS after the last handshake, so calls run with V8's
// usual young generation (one kept at 1 MB a semi-space all the time cost 1.3x CPU per call at
// N=100 in bench --compare). The flag is process-wide; an operator who sets the semi-space size or
// growth with V8 flags (node --max-semi-space-size, NODE_OPTIONS) keeps what they set: then
// nothing is held.
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

/** How long after the last handshake the young generation may grow again. */
export const QUIET_MS = 250;
const HOLD = '--semi-space-growth-factor=1';
/** V8's default. */
const RELEASE = '--semi-space-growth-factor=2';

const operatorSets = /semi[-_]space/.test([...process.execArgv, process.env.NODE_OPTIONS ?? ''].join(' '));
/** Handshakes between two looks at the young generation's size (getHeapSpaceStatistics: ~5 us). */
const CHECK_EVERY = 16;
let quiet: NodeJS.Timeout | null = null;
let held = false;
let handshakes = 0;

/**
 * A handshake began: until QUIET_MS pass without another, the young generation (both semi-spaces)
 * does not grow to more than `maxBytes` (0: no bound). V8 doubles it when it grows, so growth stops
 * once doubling would pass the bound; V8 still takes 2 MiB (from its first 1 MiB) whatever the bound.
 * The size is looked at every CHECK_EVERY handshakes: growing needs as many bytes surviving as the
 * young generation holds, megabytes, where 16 handshakes keep ~50 KB.
 */
export function boundYoungGeneration(maxBytes: number): void {
  if (maxBytes <= 0 || operatorSets) return;
  if (!held && handshakes++ % CHECK_EVERY === 0 && newSpaceBytes() * 2 > maxBytes) {
    setFlagsFromString(HOLD);
    held = true;
  }
  if (quiet === null) {
    quiet = setTimeout(release, QUIET_MS);
    quiet.unref();
  } else {
    quiet.refresh();
  }
}

/** Whether growth is held now. */
export function youngGenerationHeld(): boolean {
  return held;
}

function newSpaceBytes(): number {
  for (const space of getHeapSpaceStatistics()) if (space.space_name === 'new_space') return space.space_size;
  /* c8 ignore next */
  return 0;
}

function release(): void {
  quiet = null;
  // the first handshake of the next burst looks again
  handshakes = 0;
  if (!held) return;
  held = false;
  setFlagsFromString(RELEASE);
}
