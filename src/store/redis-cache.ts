import type { Redis } from 'ioredis';
import {
  type CachedResponse,
  cachedResponseSize,
  type ResponseCache,
  type ResponseCacheStats,
} from '../guards/response-cache.js';
import type { Logger } from '../log.js';
import type { SharedStore } from './redis.js';

/*
 * Keys (under the prefix): `cache:e:<key>` one entry (PX = TTL),
 * `cache:lru` zset key -> last use (ms), `cache:exp` zset key -> expiry (ms),
 * `cache:size` hash key -> bytes, `cache:n` hash of fleet counters
 * (hits, misses, evictions, bytes). Scores use the server's clock (`now`),
 * so an injected clock expires entries exactly like the in-memory cache.
 */

/** Shared by the scripts: drops entries past their expiry (at most 100 per call) and returns the counters. */
const LUA_COMMON = `
local function drop(m)
  redis.call('DEL', ARGV[1] .. m)
  redis.call('ZREM', KEYS[1], m)
  redis.call('ZREM', KEYS[2], m)
  local sz = redis.call('HGET', KEYS[3], m)
  if sz then
    redis.call('HINCRBY', KEYS[4], 'bytes', -tonumber(sz))
    redis.call('HDEL', KEYS[3], m)
  end
end
local function purge(now)
  for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, 100)) do drop(m) end
end
local function counters()
  local c = redis.call('HMGET', KEYS[4], 'hits', 'misses', 'evictions', 'bytes')
  return {redis.call('ZCARD', KEYS[1]), tonumber(c[1]) or 0, tonumber(c[2]) or 0, tonumber(c[3]) or 0, tonumber(c[4]) or 0}
end
`;

/** ARGV: entry-key prefix, member, now. Returns {value or false, counters...}. */
const LUA_GET = `${LUA_COMMON}
local now = tonumber(ARGV[3])
purge(now)
local m = ARGV[2]
local v = redis.call('GET', ARGV[1] .. m)
if v then
  redis.call('ZADD', KEYS[1], 'XX', now, m)
  redis.call('HINCRBY', KEYS[4], 'hits', 1)
else
  if redis.call('ZSCORE', KEYS[1], m) then drop(m) end
  redis.call('HINCRBY', KEYS[4], 'misses', 1)
  v = false
end
local c = counters()
return {v, c[1], c[2], c[3], c[4], c[5]}
`;

/** ARGV: entry-key prefix, member, now, value, size, ttlMs, maxEntries, maxBytes. */
const LUA_SET = `${LUA_COMMON}
local now = tonumber(ARGV[3])
purge(now)
local m = ARGV[2]
if redis.call('ZSCORE', KEYS[1], m) then drop(m) end
local ttl = tonumber(ARGV[6])
redis.call('SET', ARGV[1] .. m, ARGV[4], 'PX', ttl)
redis.call('ZADD', KEYS[1], now, m)
redis.call('ZADD', KEYS[2], now + ttl, m)
redis.call('HSET', KEYS[3], m, ARGV[5])
redis.call('HINCRBY', KEYS[4], 'bytes', tonumber(ARGV[5]))
local maxEntries, maxBytes = tonumber(ARGV[7]), tonumber(ARGV[8])
while redis.call('ZCARD', KEYS[1]) > maxEntries or (tonumber(redis.call('HGET', KEYS[4], 'bytes')) or 0) > maxBytes do
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0)[1]
  if not oldest then break end
  drop(oldest)
  redis.call('HINCRBY', KEYS[4], 'evictions', 1)
end
local c = counters()
return {1, c[1], c[2], c[3], c[4], c[5]}
`;

/** ARGV: entry-key prefix, '', now. */
const LUA_STATS = `${LUA_COMMON}
purge(tonumber(ARGV[3]))
local c = counters()
return {0, c[1], c[2], c[3], c[4], c[5]}
`;

/** ARGV: entry-key prefix. Drops every entry; the counters stay. */
const LUA_CLEAR = `${LUA_COMMON}
for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do drop(m) end
redis.call('HSET', KEYS[4], 'bytes', 0)
return 1
`;

type Reply = [Buffer | string | null, number, number, number, number, number];
type CacheScript = (keys: string[], argv: (string | number | Buffer)[]) => Promise<Reply>;

interface CacheCommands {
  svcCacheGetBuffer: CacheScript;
  svcCacheSet: CacheScript;
  svcCacheStats: CacheScript;
  svcCacheClear: CacheScript;
}

function defineScripts(redis: Redis): CacheCommands {
  const scripts = {
    svcCacheGet: LUA_GET,
    svcCacheSet: LUA_SET,
    svcCacheStats: LUA_STATS,
    svcCacheClear: LUA_CLEAR,
  };
  for (const [name, lua] of Object.entries(scripts)) {
    if (!(name in redis)) redis.defineCommand(name, { numberOfKeys: 4, lua });
  }
  return redis as unknown as CacheCommands;
}

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
  const cmd = defineScripts(store.redis);
  const keys = [
    store.key('cache', 'lru'),
    store.key('cache', 'exp'),
    store.key('cache', 'size'),
    store.key('cache', 'n'),
  ];
  const entryPrefix = store.key('cache', 'e', '');
  let last: ResponseCacheStats = { entries: 0, bytes: 0, hits: 0, misses: 0, evictions: 0 };
  let skipped = 0;
  const remember = (r: Reply): void => {
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
