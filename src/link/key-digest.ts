// A computer's key as the pins keep it (pins.ts, the pins file): its SHA-256 in hex, never the key.
import { createHash, timingSafeEqual } from 'node:crypto';

/** A key's SHA-256 as 64 lowercase hex digits (what `sha256sum` prints): the form kept in memory and in the pins file. */
export function keyDigest(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** The SHA-256 hex form of a key. */
export const DIGEST_PATTERN = /^[0-9a-f]{64}$/;

/** Whether two hex digests are the same, compared in constant time. */
export function sameDigest(a: string, b: string): boolean {
  return timingSafeEqual(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'));
}
