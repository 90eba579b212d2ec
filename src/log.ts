// Line-oriented logger on stderr; stdout is kept for the startup address lines.
import type { LogLevel } from './config.js';

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export interface Logger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/**
 * What a log line must not carry as it is: line breaks, C0 controls but the tab (ESC starts a terminal
 * control sequence, \r overwrites the line), DEL and C1 controls (U+0085 ends a line for some readers),
 * the line and paragraph separators, bidirectional controls (U+202E shows the rest of a line backwards).
 * Messages quote what peers choose, but not every one can (an upstream's error text, its stderr).
 */
const UNSAFE = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/;
const UNSAFE_ALL = new RegExp(UNSAFE.source, 'g');
const escapeChar = (c: string): string => (c === '\n' ? '\n    ' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/**
 * One log entry's text as written: every unsafe character escaped as \uXXXX, except that a line break
 * (a stack trace, a list of config errors) starts an indented continuation line, so every line that
 * starts at the margin is one the logger began with its time stamp: none can be forged.
 */
export function logSafe(message: string): string {
  return UNSAFE.test(message) ? message.replace(UNSAFE_ALL, escapeChar) : message;
}

export function createLogger(level: LogLevel, sink: (line: string) => void = (l) => process.stderr.write(l + '\n')): Logger {
  const at = (lineLevel: Exclude<LogLevel, 'silent'>) => (message: string) => {
    if (RANK[lineLevel] >= RANK[level]) sink(`${new Date().toISOString()} ${lineLevel} ${logSafe(message)}`);
  };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
