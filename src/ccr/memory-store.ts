import { LRUCache } from 'lru-cache';
import { ENTRY_OVERHEAD, stringBytes } from '../engine/memo-budget.js';
import { SvcError } from '../errors.js';
import type { CcrStore } from './store.js';

export interface MemoryCcrStoreOptions {
  /**
   * Maximum estimated bytes (originals as V8 keeps them: one byte a character
   * when all are Latin-1, else two; and the entries). Default 256 MiB here; `svc serve` passes `--ccr-memory-max-bytes` (32 MiB).
   */
  maxSize?: number;
  /** Time to live in ms. Default 24 h. */
  ttlMs?: number;
  /** Clock in ms, for tests. Default: the real clock. */
  now?: () => number;
}

/** An in-memory CCR store: LRU bounded by size, with TTL. */
export function createMemoryCcrStore(options: MemoryCcrStoreOptions = {}): CcrStore {
  const clock = options.now;
  const maxSize = options.maxSize ?? 256 * 1024 * 1024;
  const cache = new LRUCache<string, string>({
    maxSize,
    sizeCalculation: (value, key) => stringBytes(value) + stringBytes(key) + ENTRY_OVERHEAD,
    ttl: options.ttlMs ?? 24 * 60 * 60 * 1000,
    // An injected clock must be read on every call, not cached for a millisecond.
    ...(clock ? { perf: { now: clock }, ttlResolution: 0 } : {}),
  });
  const put = (hash: string, original: string): void => {
    // lru-cache silently skips an entry larger than the whole cache; a marker
    // pointing at it could never be redeemed (principle 3), so refuse it.
    const bytes = stringBytes(original) + stringBytes(hash) + ENTRY_OVERHEAD;
    if (bytes > maxSize) {
      throw new SvcError(
        'SVC_STORE_UNAVAILABLE',
        `CCR entry of ${original.length} chars (${bytes} bytes) exceeds the store's cap`,
      );
    }
    cache.set(hash, original);
  };
  return {
    async put(hash, original) {
      put(hash, original);
    },
    async putMany(entries) {
      // One request's originals must all stay: a batch past the cap would evict its own first entries.
      let bytes = 0;
      for (const [hash, original] of entries)
        bytes += stringBytes(original) + stringBytes(hash) + ENTRY_OVERHEAD;
      if (bytes > maxSize)
        throw new SvcError('SVC_STORE_UNAVAILABLE', `CCR entries of ${bytes} bytes exceed the store's cap`);
      for (const [hash, original] of entries) put(hash, original);
    },
    async get(hash) {
      return cache.get(hash);
    },
    memoryBytes: () => cache.calculatedSize,
  };
}
