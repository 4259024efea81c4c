import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';

/**
 * Hashes of texts seen recently, keyed by the text itself. A conversation is
 * re-sent on every turn, so most texts hashed for a request were hashed for
 * the previous one: a map lookup (V8's string hash plus one comparison)
 * replaces a SHA-256 and its per-call set-up (principle 4). Exact: the key is
 * the whole text, so a hit returns what `sha256` would. Bounded by the
 * characters it holds.
 */
const memo = new LRUCache<string, string>({
  maxSize: 16 * 1024 * 1024,
  sizeCalculation: (_value, key) => key.length + 32,
});

/** Texts shorter than this are hashed directly (not worth a memo entry). */
const MEMO_MIN_LENGTH = 16;

/**
 * Content hash used for CCR references and memo keys: the first 24 hex digits
 * (96 bits) of SHA-256. Deterministic, so the same content always gets the
 * same marker (principle 2).
 */
export function contentHash(text: string): string {
  if (text.length < MEMO_MIN_LENGTH) return sha256(text);
  const hit = memo.get(text);
  if (hit !== undefined) return hit;
  const hash = sha256(text);
  memo.set(text, hash);
  return hash;
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 24);
}

/** True when `value` looks like a hash made by `contentHash`. */
export function isContentHash(value: string): boolean {
  return /^[0-9a-f]{24}$/.test(value);
}
