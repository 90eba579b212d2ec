// Exact bytes of a returned value (issue 14, finding 4): a string descriptor's base64 or text, and
// for a table every string in its copy, values and keys, taken from the descriptor's `bytes` list
// where it names one. Strings come out as 'x:<hex of the bytes>' and object keys as the hex of
// theirs, so "\xE9" and "é" (C3 A9) can never look alike. It also checks that each `bytes` entry
// names a string of the copy, and that the copy shows that string as its Lua literal body.
import assert from 'node:assert/strict';
import { luaByteLiteral } from '../../dist/tools/exec-result.js';

const hex = (b) => `x:${Buffer.from(b).toString('hex')}`;

export function exact(d) {
  if (d.type === 'string') return hex(d.base64 !== undefined ? Buffer.from(d.base64, 'base64') : Buffer.from(d.value, 'utf8'));
  if (d.type !== 'table') return d;
  const entries = new Map();
  for (const e of d.bytes ?? []) {
    const where = JSON.stringify(e.path) + (e.key ? ' key' : '');
    assert.ok(!entries.has(where), `two bytes entries for ${where}`);
    entries.set(where, { base64: e.base64, used: false });
  }
  const take = (where, shown) => {
    const e = entries.get(where);
    if (!e) return Buffer.from(shown, 'utf8');
    e.used = true;
    // A key may carry the suffix a colliding key gets: ' (string key)', ' (string key 2)' ...
    const body = where.endsWith(' key') ? shown.replace(/ \(string key(?: \d+)?\)$/, '') : shown;
    assert.equal(body, luaByteLiteral(e.base64).slice(1, -1), `the copy shows ${where} as its Lua literal`);
    return Buffer.from(e.base64, 'base64');
  };
  const walk = (v, path) => {
    if (typeof v === 'string') return hex(take(JSON.stringify(path), v));
    if (Array.isArray(v)) return v.map((x, i) => walk(x, [...path, i]));
    if (v !== null && typeof v === 'object') {
      const out = {};
      for (const [k, x] of Object.entries(v)) {
        const p = [...path, k];
        out[hex(take(`${JSON.stringify(p)} key`, k)).slice(2)] = walk(x, p);
      }
      return out;
    }
    return v;
  };
  const value = walk(d.value, []);
  for (const [where, e] of entries) assert.ok(e.used, `bytes entry ${where} names no string of the copy`);
  return value;
}

/** The expected exact form: strings or Buffers for strings, arrays, and objects given as [key, value] pairs. */
export function expected(v) {
  if (typeof v === 'string' || Buffer.isBuffer(v)) return hex(typeof v === 'string' ? Buffer.from(v, 'utf8') : v);
  if (Array.isArray(v)) return v.map(expected);
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [hex(typeof k === 'string' ? Buffer.from(k, 'utf8') : k).slice(2), expected(x)]));
  return v;
}

export const ALL_BYTES = Buffer.from(Array.from({ length: 256 }, (_, i) => i));

// Keys and values at any depth; "\xC3\xA9" (é) and "\xE9" must differ, 0x80-0x9F stay bytes.
export const NESTED_CODE = `local all, each = {}, {}
  for i = 0, 255 do all[#all + 1] = string.char(i) each[i + 1] = string.char(i) end
  return {
    utf = "\\195\\169", latin = "\\233", c1 = "\\128\\159", all = table.concat(all), each = each,
    deep = { { { "\\255\\254", ok = "fine" } } },
    ["k\\233y"] = "\\195\\169", ["\\195\\169"] = "utf key", ["\\233"] = "byte key",
    [string.char(0x80, 0x9f)] = { [string.char(0xe9)] = string.char(0xc3) },
  }, { "\\195\\169", "\\233" }, "plain"`;
export const NESTED_EXPECTED = new Map([
  ['utf', 'é'],
  ['latin', Buffer.from([0xe9])],
  ['c1', Buffer.from([0x80, 0x9f])],
  ['all', ALL_BYTES],
  ['each', [...ALL_BYTES].map((b) => Buffer.from([b]))],
  ['deep', [[new Map([['1', Buffer.from([0xff, 0xfe])], ['ok', 'fine']])]]],
  [Buffer.from('k\xe9y', 'latin1'), 'é'],
  ['é', 'utf key'],
  [Buffer.from([0xe9]), 'byte key'],
  [Buffer.from([0x80, 0x9f]), new Map([[Buffer.from([0xe9]), Buffer.from([0xc3])]])],
]);
