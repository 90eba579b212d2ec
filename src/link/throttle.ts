// Per-socket inbound budget: at most `bytesPerSecond` of frames a second (each frame counts at least
// MIN_FRAME_COST, so floods of tiny frames are bounded too). Over budget, the socket stops being
// read until the second is over: TCP pushes back on the sender, and a flooding computer costs the
// bridge a bounded share of its time instead of starving every other caller.
// The state is three fields of an object the caller already has per socket (its WebSocket), not an
// object of its own: with 10,000 idle links that object was 72 B of each.
export const MIN_FRAME_COST = 256;

export interface Pausable {
  pause(): unknown;
  resume(): unknown;
}

/** What the throttle keeps per socket. A fresh socket has throttleStart -Infinity, throttleUsed 0, throttleTimer null. */
export interface ThrottleState {
  /** When the current one-second window began (ms). */
  throttleStart: number;
  /** Bytes charged in it. */
  throttleUsed: number;
  /** Set while reading is paused: resumes it when the second is over. */
  throttleTimer: NodeJS.Timeout | null;
  /** The socket paused and resumed. */
  readonly raw: Pausable | null;
}

/** Counts one frame of `bytes`; true when this frame used up the budget and reading paused. */
export function chargeFrame(state: ThrottleState, bytes: number, bytesPerSecond: number, now: number): boolean {
  if (now - state.throttleStart >= 1000) {
    state.throttleStart = now;
    state.throttleUsed = 0;
  }
  state.throttleUsed += Math.max(bytes, MIN_FRAME_COST);
  if (state.throttleUsed <= bytesPerSecond || state.throttleTimer !== null || state.raw === null) return false;
  state.raw.pause();
  state.throttleTimer = setTimeout(resumeReading, Math.max(1, 1000 - (now - state.throttleStart)), state);
  return true;
}

function resumeReading(state: ThrottleState): void {
  state.throttleTimer = null;
  state.raw?.resume();
}

/** The socket is gone: drop the timer. */
export function disposeThrottle(state: ThrottleState): void {
  if (state.throttleTimer) clearTimeout(state.throttleTimer);
  state.throttleTimer = null;
}
