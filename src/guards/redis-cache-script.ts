import type { Redis } from 'ioredis';

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

/** What every cache script returns: value (get) or flag, then entries, hits, misses, evictions, bytes. */
export type CacheReply = [Buffer | string | null, number, number, number, number, number];
type CacheScript = (keys: string[], argv: (string | number | Buffer)[]) => Promise<CacheReply>;

/** The cache scripts on an ioredis client. */
export interface CacheCommands {
  svcCacheGetBuffer: CacheScript;
  svcCacheSet: CacheScript;
  svcCacheStats: CacheScript;
  svcCacheClear: CacheScript;
}

/** Defines the cache scripts on `redis` (EVALSHA, reloaded by ioredis after a Redis restart). */
export function cacheCommands(redis: Redis): CacheCommands {
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
