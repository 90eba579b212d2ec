// A budget for log lines that hostile peers can trigger (bad frames, refused hellos): at most
// `perSecond` lines a second; the rest are counted and the next line that fits says how many were
// suppressed. Keeps a flood of bad input from turning into a flood of (blocking) stderr writes.
export class LogBudget {
  private windowStart = -Infinity;
  private used = 0;
  private suppressed = 0;

  constructor(private readonly perSecond: number, private readonly now: () => number = Date.now) {}

  /** The line to log (noting what was suppressed before it), or null when over budget. */
  take(line: string): string | null {
    const t = this.now();
    if (t - this.windowStart >= 1000) {
      this.windowStart = t;
      this.used = 0;
    }
    if (this.used >= this.perSecond) {
      this.suppressed++;
      return null;
    }
    this.used++;
    if (this.suppressed === 0) return line;
    const n = this.suppressed;
    this.suppressed = 0;
    return `${line} (${n} similar line${n === 1 ? '' : 's'} suppressed)`;
  }
}
