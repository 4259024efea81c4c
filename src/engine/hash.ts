import { hash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { ENTRY_OVERHEAD, engineMemoLimit, registerEngineMemo, stringBytes } from './memo-budget.js';
import { TextLru } from './text-map.js';

/**
 * Hashes of texts seen recently. A conversation is re-sent on every turn, so
 * most texts hashed for a request were hashed for the previous one: a
 * lookup replaces a SHA-256 and its per-call set-up (principle 4). A short
 * text is the key itself (V8's string hash plus one comparison); a longer one
 * is kept with the others of its length and compared (see `TextMap`: V8
 * hashes a string slower than SHA-256 does, and a new conversation's texts
 * are all new strings). Exact: a hit compares the whole text, so it returns
 * what `sha256` would. Bounded by the bytes it holds (the texts as V8 keeps
 * them, the hashes, the entries; the server's share of `--memo-max-bytes`,
 * see memo-budget.ts).
 */
/** Bytes of a 24-digit hash string. */
const HASH_BYTES = 40;

let memo = createMemo(engineMemoLimit('content_hashes'));

/**
 * The memo's two parts: short texts by themselves (V8's hash of a short
 * string costs less than a SHA-256), long ones by length (`TextLru`). The
 * long texts get most of the bound: they are what a hit saves most on.
 */
function createMemo(maxBytes: number): { short: LRUCache<string, string>; long: TextLru<string> } {
  const shortBytes = Math.floor(maxBytes / 8);
  return {
    short: new LRUCache<string, string>({
      maxSize: Math.max(1, shortBytes),
      sizeCalculation: (_value, key) => stringBytes(key) + HASH_BYTES + ENTRY_OVERHEAD,
    }),
    long: new TextLru<string>(Math.max(1, maxBytes - shortBytes)),
  };
}

registerEngineMemo('content_hashes', {
  bytes: () => memo.short.calculatedSize + memo.long.calculatedSize,
  limit(maxBytes) {
    if (maxBytes !== memo.short.maxSize + memo.long.maxSize) memo = createMemo(maxBytes);
  },
});

/** Texts shorter than this are hashed directly (not worth a memo entry). */
const MEMO_MIN_LENGTH = 16;

/** Texts from this long are kept by length (`TextLru`), not hashed by V8 to be looked up. */
const BY_LENGTH_FROM = 256;

/**
 * Content hash used for CCR references and memo keys: the first 24 hex digits
 * (96 bits) of SHA-256. Deterministic, so the same content always gets the
 * same marker (principle 2).
 */
export function contentHash(text: string): string {
  if (text.length < MEMO_MIN_LENGTH) return contentHashOnce(text);
  const part = text.length >= BY_LENGTH_FROM ? memo.long : memo.short;
  const hit = part.get(text);
  if (hit !== undefined) return hit;
  const hash = contentHashOnce(text);
  if (part === memo.long) memo.long.set(text, hash, stringBytes(text) + HASH_BYTES + ENTRY_OVERHEAD);
  else memo.short.set(text, hash);
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
