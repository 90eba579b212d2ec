// How each environment variable's text becomes a value: whole numbers in a range, hosts, origins, on/off,
// log levels (pure). A bad value is a ConfigError naming the variable, the value and what was expected.
import { LOG_LEVELS, MiB, type LogLevel } from './variables.js';

export class ConfigError extends Error {
  readonly code = 'ERR_CONFIG';
  constructor(readonly variable: string, readonly value: string, reason: string) {
    super(`${variable}=${JSON.stringify(value)}: ${reason}`);
    this.name = 'ConfigError';
  }
}

export type Parse<T> = (raw: string, name: string) => T;

export const integer =
  (min: number, max: number): Parse<number> =>
  (raw, name) => {
    if (!/^\d+$/.test(raw.trim())) throw new ConfigError(name, raw, `expected a whole number from ${min} to ${max}`);
    const n = Number(raw.trim());
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      throw new ConfigError(name, raw, `expected a whole number from ${min} to ${max}`);
    }
    return n;
  };

export const host: Parse<string> = (raw, name) => {
  // an IPv6 address may be written the way URLs write it: [::1]
  const value = raw.trim().replace(/^\[(.*)\]$/, '$1');
  if (value === '' || /[\s/[\]]/.test(value)) throw new ConfigError(name, raw, 'expected a host name or IP address');
  return value;
};

export const origins: Parse<string[]> = (raw, name) => {
  const list = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  return list.map((origin) => {
    let url: URL | null = null;
    try {
      url = new URL(origin);
    } catch {
      // reported below
    }
    // an origin is scheme://host[:port] and nothing else; stored the way browsers send it
    if (
      !url ||
      (url.protocol !== 'http:' && url.protocol !== 'https:') ||
      url.username !== '' ||
      url.password !== '' ||
      url.pathname !== '/' ||
      url.search !== '' ||
      url.hash !== '' ||
      /[?#]/.test(origin)
    ) {
      throw new ConfigError(name, raw, `"${origin}" is not an origin such as https://example.com`);
    }
    return url.origin;
  });
};

export const onOff: Parse<boolean> = (raw, name) => {
  const value = raw.trim().toLowerCase();
  if (['on', 'true', '1', 'yes'].includes(value)) return true;
  if (['off', 'false', '0', 'no'].includes(value)) return false;
  throw new ConfigError(name, raw, 'expected on or off');
};

export const level: Parse<LogLevel> = (raw, name) => {
  const value = raw.trim().toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(value)) {
    throw new ConfigError(name, raw, `expected one of ${LOG_LEVELS.join(', ')}`);
  }
  return value as LogLevel;
};

/** CC_LINK_PIN: on, off, or strict (only pinned ids, and those the operator opened, link). */
export const pinMode: Parse<'on' | 'off' | 'strict'> = (raw, name) => {
  if (raw.trim().toLowerCase() === 'strict') return 'strict';
  try {
    return onOff(raw, name) ? 'on' : 'off';
  } catch {
    throw new ConfigError(name, raw, 'expected on, off or strict');
  }
};

export const optionalPath: Parse<string | null> = (raw) => (raw.trim() === '' ? null : raw);

export const port = integer(0, 65535);
export const duration = integer(1, 3_600_000);
export const bytes = integer(1024, 1024 * MiB);
export const count = integer(1, 1_000_000);
