// A budget for log lines that hostile peers can trigger (bad frames, refused hellos, an upstream
// server's stderr and broken lines): at most
// `perSecond` lines a second; the rest are counted and the next line that fits says how many were
// suppressed. Keeps a flood of bad input from turning into a flood of (blocking) stderr writes.
import type { Logger } from './log.js';

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

/**
 * `log` with each level's lines through a LogBudget of `perSecond`: for the lines a peer provokes at
 * will (an upstream server's stderr, lines that are not JSON, malformed messages).
 */
export function budgetedLogger(log: Logger, perSecond: number): Logger {
  const at = (write: (message: string) => void) => {
    const budget = new LogBudget(perSecond);
    return (message: string) => {
      const text = budget.take(message);
      if (text !== null) write(text);
    };
  };
  return { debug: at((m) => log.debug(m)), info: at((m) => log.info(m)), warn: at((m) => log.warn(m)), error: at((m) => log.error(m)) };
}
