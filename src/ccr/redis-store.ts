import { SvcError } from '../errors.js';
import type { SharedStore } from '../store/redis.js';
import type { CcrStore } from './store.js';

export interface RedisCcrStoreOptions {
  /** Time to live in seconds. */
  ttlSeconds: number;
}

/**
 * CCR store in Redis, shared by every replica: `<prefix>ccr:<hash>` with a TTL.
 * While Redis is down, `put` throws (the caller then forwards the original,
 * so no marker is emitted that cannot be redeemed) and `get` throws
 * SVC_STORE_UNAVAILABLE (routes answer 503).
 */
export function createRedisCcrStore(store: SharedStore, options: RedisCcrStoreOptions): CcrStore {
  const unavailable = (cause: unknown) =>
    new SvcError('SVC_STORE_UNAVAILABLE', 'the CCR store (Redis) is unreachable; try again shortly', { cause });
  return {
    async put(hash, original) {
      try {
        await store.redis.set(store.key('ccr', hash), original, 'EX', options.ttlSeconds);
      } catch (cause) {
        throw unavailable(cause);
      }
    },
    async get(hash) {
      try {
        return (await store.redis.get(store.key('ccr', hash))) ?? undefined;
      } catch (cause) {
        throw unavailable(cause);
      }
    },
  };
}
