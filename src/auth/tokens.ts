// Shared-secret checks for both ports. Pure: no I/O, no clock.
//
// Every configured token and the presented one are hashed to SHA-256 first, so the comparison always
// runs over two 32-byte digests whatever their lengths, and every configured token is compared on
// every check (no early exit on the first match): how long a check takes says nothing about how much
// of a token was right, nor about which of the rotation tokens matched.
import { createHash, timingSafeEqual } from 'node:crypto';

export type DigestEqual = (a: Buffer, b: Buffer) => boolean;

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/** Header-safe printable ASCII without spaces or commas (commas and whitespace separate tokens). */
export const TOKEN_PATTERN = /^[\x21-\x2b\x2d-\x7e]+$/;
export const MIN_TOKEN_LENGTH = 16;

/** Splits a list of tokens written one per line or separated by commas or spaces. */
export function splitTokens(text: string): string[] {
  return text.split(/[\s,]+/).filter((t) => t !== '');
}

/** Why `token` is unfit to be a secret, or null. */
export function tokenProblem(token: string): string | null {
  if (!TOKEN_PATTERN.test(token)) return 'a token may hold only printable ASCII without spaces or commas';
  if (token.length < MIN_TOKEN_LENGTH) return `a token must be at least ${MIN_TOKEN_LENGTH} characters (try: openssl rand -hex 32)`;
  return null;
}

export class TokenSet {
  private readonly digests: Buffer[];

  /** `equal` is injectable only so tests can watch the comparisons; it defaults to timingSafeEqual. */
  constructor(tokens: readonly string[], private readonly equal: DigestEqual = timingSafeEqual) {
    this.digests = tokens.map(digest);
  }

  /** Whether any token is configured (no token: the check is off). */
  get enabled(): boolean {
    return this.digests.length > 0;
  }

  /** Whether `presented` equals one of the tokens; compares against all of them every time. */
  matches(presented: string | null | undefined): boolean {
    const candidate = digest(typeof presented === 'string' ? presented : '');
    let found = 0;
    for (const known of this.digests) found |= this.equal(candidate, known) ? 1 : 0;
    return found === 1 && typeof presented === 'string' && presented !== '';
  }
}

/**
 * A name for the client holding `token` (per-client limits): a prefix of its SHA-256, so the token
 * itself is not kept in the bridge's tables.
 */
export function tokenIdentity(token: string): string {
  return `token:${digest(token).toString('hex').slice(0, 16)}`;
}

/** The token of an `Authorization: Bearer <token>` header, or null. */
export function bearerToken(header: string | undefined): string | null {
  if (header === undefined) return null;
  const match = /^\s*Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? (match[1] as string) : null;
}
