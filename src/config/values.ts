// How each environment variable's text becomes a value: whole numbers in a range, words from a list (on/off,
// log levels), hosts, origins (pure); the ranges and lists come from the variable's spec (variables.ts).
// A bad value is a ConfigError naming the variable, the value and what was expected.

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

const ON = ['on', 'true', '1', 'yes'];
const OFF = ['off', 'false', '0', 'no'];

/** One of `values` (any case); where those are on and off, the usual spellings of each too. Gives the word as listed. */
export const word =
  <W extends string>(values: readonly W[], accepted: string): Parse<W> =>
  (raw, name) => {
    let value = raw.trim().toLowerCase();
    if (values.includes('on' as W) && ON.includes(value)) value = 'on';
    if (values.includes('off' as W) && OFF.includes(value)) value = 'off';
    if (!(values as readonly string[]).includes(value)) throw new ConfigError(name, raw, `expected ${accepted}`);
    return value as W;
  };

export const optionalPath: Parse<string | null> = (raw) => (raw.trim() === '' ? null : raw);
