import { LRUCache } from 'lru-cache';
import { SvcError } from '../errors.js';
import type { SharedStore } from '../store/redis.js';
import type { CcrStore } from './store.js';

/** Options of `createRedisCcrStore`. */
export interface RedisCcrStoreOptions {
  /** Time to live in seconds. */
  ttlSeconds: number;
  /**
   * Size of the local copy of entries this replica wrote or read (UTF-16
   * code units). Default 64 Mi; 0 turns it off.
   */
  localMaxSize?: number;
}

/**
 * CCR store in Redis, shared by every replica: `<prefix>ccr:<hash>` with a TTL.
 * Each replica also keeps a bounded local copy of the entries it wrote or
 * read, so redeeming them needs no round trip and still works while Redis
 * is down. While Redis is down, `put` throws (the caller then forwards the
 * original, so no marker is emitted that other replicas cannot redeem) and
 * `get` of an entry not held locally throws SVC_STORE_UNAVAILABLE (routes
 * answer 503 with the message).
 */
export function createRedisCcrStore(store: SharedStore, options: RedisCcrStoreOptions): CcrStore {
  const unavailable = (cause: unknown) => {
    store.noteFailure(cause);
    return new SvcError(
      'SVC_STORE_UNAVAILABLE',
      'the CCR store (Redis) is unreachable and this replica holds no copy of the entry; try again shortly',
      { cause },
    );
  };
  const localMax = options.localMaxSize ?? 64 * 1024 * 1024;
  const local =
    localMax > 0
      ? new LRUCache<string, string>({
          maxSize: localMax,
          sizeCalculation: (value) => Math.max(1, value.length),
          ttl: options.ttlSeconds * 1000,
        })
      : undefined;
  return {
    async put(hash, original) {
      if (!store.healthy) throw unavailable(new Error('store unreachable'));
      try {
        // Always written through: Redis may have lost it (restart, eviction) since the last turn.
        await store.redis.set(store.key('ccr', hash), original, 'EX', options.ttlSeconds);
      } catch (cause) {
        throw unavailable(cause);
      }
      local?.set(hash, original);
    },
    async get(hash) {
      const held = local?.get(hash);
      if (held !== undefined) return held;
      if (!store.healthy) throw unavailable(new Error('store unreachable'));
      let found: string | null;
      try {
        found = await store.redis.get(store.key('ccr', hash));
      } catch (cause) {
        throw unavailable(cause);
      }
      if (found === null) return undefined;
      local?.set(hash, found);
      return found;
    },
  };
}
