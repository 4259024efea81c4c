import { hash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { ENTRY_OVERHEAD, engineMemoLimit, registerEngineMemo, stringBytes } from './memo-budget.js';

/**
 * Hashes of texts seen recently, keyed by the text itself. A conversation is
 * re-sent on every turn, so most texts hashed for a request were hashed for
 * the previous one: a map lookup (V8's string hash plus one comparison)
 * replaces a SHA-256 and its per-call set-up (principle 4). Exact: the key is
 * the whole text, so a hit returns what `sha256` would. Bounded by the
 * bytes it holds (the texts as V8 keeps them, the hashes, the entries; the
 * server's share of `--memo-max-bytes`, see memo-budget.ts).
 */
/** Bytes of a 24-digit hash string. */
const HASH_BYTES = 40;

let memo = createMemo(engineMemoLimit('content_hashes'));

function createMemo(maxBytes: number): LRUCache<string, string> {
  return new LRUCache<string, string>({
    maxSize: maxBytes,
    sizeCalculation: (_value, key) => stringBytes(key) + HASH_BYTES + ENTRY_OVERHEAD,
  });
}

registerEngineMemo('content_hashes', {
  bytes: () => memo.calculatedSize,
  limit(maxBytes) {
    if (maxBytes !== memo.maxSize) memo = createMemo(maxBytes);
  },
});

/** Texts shorter than this are hashed directly (not worth a memo entry). */
const MEMO_MIN_LENGTH = 16;

/**
 * Content hash used for CCR references and memo keys: the first 24 hex digits
 * (96 bits) of SHA-256. Deterministic, so the same content always gets the
 * same marker (principle 2).
 */
export function contentHash(text: string): string {
  if (text.length < MEMO_MIN_LENGTH) return contentHashOnce(text);
  const hit = memo.get(text);
  if (hit !== undefined) return hit;
  const hash = contentHashOnce(text);
  memo.set(text, hash);
  return hash;
}

/**
 * `contentHash` without the memo, for a text made to be hashed once (a key
 * built of other hashes): looking it up would cost as much as hashing it,
 * and its entry would push out a text worth keeping.
 */
export function contentHashOnce(text: string): string {
  return hash('sha256', text, 'hex').slice(0, 24);
}

/** True when `value` looks like a hash made by `contentHash`. */
export function isContentHash(value: string): boolean {
  return /^[0-9a-f]{24}$/.test(value);
}
