import { LRUCache } from 'lru-cache';
import type { CcrStore } from './store.js';

export interface MemoryCcrStoreOptions {
  /** Maximum total size in UTF-16 code units. Default 256 Mi. */
  maxSize?: number;
  /** Time to live in ms. Default 24 h. */
  ttlMs?: number;
}

/** An in-memory CCR store: LRU bounded by size, with TTL. */
export function createMemoryCcrStore(options: MemoryCcrStoreOptions = {}): CcrStore {
  const cache = new LRUCache<string, string>({
    maxSize: options.maxSize ?? 256 * 1024 * 1024,
    sizeCalculation: (value) => Math.max(1, value.length),
    ttl: options.ttlMs ?? 24 * 60 * 60 * 1000,
  });
  return {
    async put(hash, original) {
      cache.set(hash, original);
    },
    async get(hash) {
      return cache.get(hash);
    },
  };
}
