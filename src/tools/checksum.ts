// Adler-32 (RFC 1950), the checksum mcp-computer computes too: plain arithmetic, so the Lua side
// needs no bitwise operators. Running: adler32(b, adler32(a)) equals adler32(a + b).
export const ADLER_START = 1;
const MOD = 65521;
/** Bytes summed before reducing: keeps b far below 2^53. */
const BLOCK = 4096;

export function adler32(bytes: Uint8Array, state: number = ADLER_START): number {
  let a = state % 65536;
  let b = Math.floor(state / 65536);
  for (let i = 0; i < bytes.length; i += BLOCK) {
    const end = Math.min(i + BLOCK, bytes.length);
    for (let k = i; k < end; k++) {
      a += bytes[k] as number;
      b += a;
    }
    a %= MOD;
    b %= MOD;
  }
  return b * 65536 + a;
}

export function adlerText(value: number): string {
  return `adler32:${value.toString(16).padStart(8, '0')}`;
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Canonical base64 only (what Buffer would write back): no whitespace, no URL alphabet, padded. */
export function isStrictBase64(text: string): boolean {
  return BASE64.test(text) && Buffer.from(text, 'base64').toString('base64') === text;
}
