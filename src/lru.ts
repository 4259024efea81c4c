import { LRUCache } from 'lru-cache';

/**
 * An LRU cache of at most `entries` entries that allocates as it fills.
 * lru-cache's `max` allocates its arrays up front: about 3 ms per 50,000
 * entries, paid at module load by every `svc compress` run and server start
 * (issue 19) for memos that mostly hold a few hundred entries. Bounded by
 * `maxSize` with every entry counting 1, it evicts in the same order and
 * grows only as far as it is used.
 */
export function lruOfEntries<K extends {}, V extends {}>(entries: number): LRUCache<K, V> {
  return new LRUCache<K, V>({ maxSize: entries, sizeCalculation: () => 1 });
}
