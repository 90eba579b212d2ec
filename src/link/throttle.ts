// Per-socket inbound budget: at most `bytesPerSecond` of frames a second (each frame counts at least
// MIN_FRAME_COST, so floods of tiny frames are bounded too). Over budget, the socket stops being
// read until the second is over: TCP pushes back on the sender, and a flooding computer costs the
// bridge a bounded share of its time instead of starving every other caller.
export const MIN_FRAME_COST = 256;

export interface Pausable {
  pause(): unknown;
  resume(): unknown;
}

export class InboundThrottle {
  private windowStart = -Infinity;
  private used = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly socket: Pausable,
    private readonly bytesPerSecond: number,
    private readonly now: () => number = Date.now,
  ) {}

  get paused(): boolean {
    return this.timer !== null;
  }

  /** Counts one frame of `bytes`; true when this frame used up the budget and reading paused. */
  charge(bytes: number): boolean {
    const t = this.now();
    if (t - this.windowStart >= 1000) {
      this.windowStart = t;
      this.used = 0;
    }
    this.used += Math.max(bytes, MIN_FRAME_COST);
    if (this.used <= this.bytesPerSecond || this.timer !== null) return false;
    this.socket.pause();
    this.timer = setTimeout(() => {
      this.timer = null;
      this.socket.resume();
    }, Math.max(1, 1000 - (t - this.windowStart)));
    return true;
  }

  /** The socket is gone: drop the timer. */
  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
