import type { Logger } from '../log.js';
import type { SharedStore } from '../store/redis.js';
import { type CacheReply, cacheCommands } from './redis-cache-script.js';
import {
  type CachedResponse,
  cachedResponseSize,
  type ResponseCache,
  type ResponseCacheStats,
} from './response-cache.js';

/** An entry as stored: its JSON head (without the body), a newline, the body bytes. */
export function encodeCachedResponse(value: CachedResponse): Buffer {
  const { body, ...head } = value;
  return Buffer.concat([Buffer.from(`${JSON.stringify(head)}\n`), body]);
}

/** The inverse of `encodeCachedResponse`; undefined when the bytes are not an entry. */
export function decodeCachedResponse(bytes: Buffer): CachedResponse | undefined {
  const nl = bytes.indexOf(10);
  if (nl < 0) return undefined;
  try {
    const head = JSON.parse(bytes.subarray(0, nl).toString('utf8')) as Omit<CachedResponse, 'body'>;
    return { ...head, body: Buffer.from(bytes.subarray(nl + 1)) };
  } catch {
    return undefined;
  }
}

/** Options of `createRedisResponseCache` (the bounds are those of `--cache-*`). */
export interface RedisResponseCacheOptions {
  maxEntries: number;
  ttlS: number;
  maxBytes: number;
  now?: () => number;
  logger: Logger;
}

/**
 * The response cache in Redis, shared by every replica: an answer stored by
 * one is a HIT on the others. Bounded like the in-memory one (entries, bytes,
 * TTL; least recently used first), each operation one atomic Lua script.
 * While Redis is unreachable the cache is skipped: lookups miss (counted in
 * `skipped`, not in the fleet's misses) and answers are not stored.
 */
export function createRedisResponseCache(
  store: SharedStore,
  options: RedisResponseCacheOptions,
): ResponseCache & {
  /** Lookups and stores skipped because Redis was unreachable. */
  skipped(): number;
} {
  const now = options.now ?? Date.now;
  const cmd = cacheCommands(store.redis);
  const keys = [
    store.key('cache', 'lru'),
    store.key('cache', 'exp'),
    store.key('cache', 'size'),
    store.key('cache', 'n'),
  ];
  const entryPrefix = store.key('cache', 'e', '');
  let last: ResponseCacheStats = { entries: 0, bytes: 0, hits: 0, misses: 0, evictions: 0 };
  let skipped = 0;
  const remember = (r: CacheReply): void => {
    last = { entries: r[1], hits: r[2], misses: r[3], evictions: r[4], bytes: r[5] };
  };
  const skip = (what: string, err: unknown): undefined => {
    skipped += 1;
    store.noteFailure(err);
    if (store.healthy) options.logger.warn(`cache: ${what} skipped: ${(err as Error).message}`);
    return undefined;
  };

  return {
    async get(key) {
      if (!store.healthy) return skip('lookup', new Error('store unreachable'));
      try {
        const reply = await cmd.svcCacheGetBuffer(keys, [entryPrefix, key, now()]);
        remember(reply);
        const value = reply[0];
        return Buffer.isBuffer(value) ? decodeCachedResponse(value) : undefined;
      } catch (err) {
        return skip('lookup', err);
      }
    },
    async set(key, value) {
      const size = cachedResponseSize(value);
      if (value.status !== 200 || size > options.maxBytes) return false;
      if (!store.healthy) return skip('store', new Error('store unreachable')) ?? false;
      try {
        const args = [entryPrefix, key, now(), encodeCachedResponse(value), size, options.ttlS * 1000];
        remember(await cmd.svcCacheSet(keys, [...args, options.maxEntries, options.maxBytes]));
        return true;
      } catch (err) {
        return skip('store', err) ?? false;
      }
    },
    async stats() {
      try {
        remember(await cmd.svcCacheStats(keys, [entryPrefix, '', now()]));
      } catch {
        // Outage: the last counters fetched.
      }
      return { ...last };
    },
    peekStats() {
      return { ...last };
    },
    async clear() {
      await cmd.svcCacheClear(keys, [entryPrefix]);
    },
    skipped: () => skipped,
  };
}
