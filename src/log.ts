// Line-oriented logger on stderr; stdout is kept for the startup address lines.
import type { LogLevel } from './config.js';

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export interface Logger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export function createLogger(level: LogLevel, sink: (line: string) => void = (l) => process.stderr.write(l + '\n')): Logger {
  const at = (lineLevel: Exclude<LogLevel, 'silent'>) => (message: string) => {
    if (RANK[lineLevel] >= RANK[level]) sink(`${new Date().toISOString()} ${lineLevel} ${message}`);
  };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
