import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { lruOfEntries } from '../lru.js';

/**
 * The key a request carries: `Authorization: Bearer KEY` or `x-api-key: KEY`.
 * Used for svc's own keys (`/v1/compress`) and, hashed, to tell provider
 * clients apart in stats and rate limits. Never log the return value.
 */
export function requestKey(headers: IncomingHttpHeaders): string | undefined {
  const auth = headers.authorization;
  if (typeof auth === 'string') {
    const m = /^Bearer\s+(.+)$/i.exec(auth.trim());
    if (m) return m[1]!.trim();
  }
  const apiKey = headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey.length > 0) return apiKey.trim();
  return undefined;
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** Hashes of the keys seen lately: a client sends the same key on every request (principle 4). */
const keyHashes = lruOfEntries<string, string>(1024);
/** Longer keys (credential material can be a whole header) are hashed every time, never kept. */
const MAX_MEMO_KEY_CHARS = 512;

/** First 12 hex digits of the key's SHA-256: identifies a client without revealing its key. */
export function keyHash(key: string | undefined): string | undefined {
  if (key === undefined) return undefined;
  let hash = keyHashes.get(key);
  if (hash === undefined) {
    hash = digest(key).toString('hex').slice(0, 12);
    if (key.length <= MAX_MEMO_KEY_CHARS) keyHashes.set(key, hash);
  }
  return hash;
}

/**
 * True when `given` is one of `accepted`. Compares SHA-256 digests with
 * `timingSafeEqual` and checks every key, so timing reveals neither the key nor
 * which one matched. With no keys configured every request is accepted (the
 * local default of spec section 5).
 */
export function isAcceptedKey(given: string | undefined, accepted: readonly string[]): boolean {
  if (accepted.length === 0) return true;
  const probe = digest(given ?? '');
  let ok = false;
  for (const key of accepted) {
    if (timingSafeEqual(probe, digest(key)) && given !== undefined) ok = true;
  }
  return ok;
}
