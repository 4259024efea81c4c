import type { Redis } from 'ioredis';

/*
 * Savings keys (under `<prefix>savings:`): `lifetime` hash of the four
 * amounts; `r:<period>` hash "<period start ISO>|<amount>" -> value;
 * `hist` zset minute -> minute and `cp` hash minute -> checkpoint JSON
 * (one per UTC minute, at most `max` kept); `meta` hash created_at,
 * updated_at. A flush adds one replica's delta and writes the checkpoint
 * of the new fleet totals in one script, so checkpoints never go back.
 *
 * ARGV: key prefix, now ISO, now minute, entries JSON
 * [{b: {hourly: iso, daily: iso, weekly: iso, monthly: iso}, a: amount}],
 * max checkpoints, cutoffs JSON {period: oldest ISO kept}.
 */
const LUA_SAVINGS_APPLY = `
local p, nowIso, minute = ARGV[1], ARGV[2], tonumber(ARGV[3])
local entries = cjson.decode(ARGV[4])
local maxCp = tonumber(ARGV[5])
local cutoffs = cjson.decode(ARGV[6])
local ints = {'tokens_saved', 'requests', 'unpriced_tokens_saved', 'cli_tokens_saved', 'cli_runs'}
for _, e in ipairs(entries) do
  for _, f in ipairs(ints) do redis.call('HINCRBY', p .. 'lifetime', f, e.a[f]) end
  redis.call('HINCRBYFLOAT', p .. 'lifetime', 'compression_savings_usd', e.a.compression_savings_usd)
  redis.call('HINCRBYFLOAT', p .. 'lifetime', 'cache_aware_savings_usd', e.a.cache_aware_savings_usd or 0)
  for period, start in pairs(e.b) do
    local h = p .. 'r:' .. period
    for _, f in ipairs(ints) do redis.call('HINCRBY', h, start .. '|' .. f, e.a[f]) end
    redis.call('HINCRBYFLOAT', h, start .. '|compression_savings_usd', e.a.compression_savings_usd)
    redis.call('HINCRBYFLOAT', h, start .. '|cache_aware_savings_usd', e.a.cache_aware_savings_usd or 0)
  end
end
for period, oldest in pairs(cutoffs) do
  local h = p .. 'r:' .. period
  for _, field in ipairs(redis.call('HKEYS', h)) do
    if string.sub(field, 1, string.len(oldest)) < oldest then redis.call('HDEL', h, field) end
  end
end
redis.call('HSETNX', p .. 'meta', 'created_at', nowIso)
local updated = redis.call('HGET', p .. 'meta', 'updated_at')
if (not updated) or nowIso > updated then redis.call('HSET', p .. 'meta', 'updated_at', nowIso) end
local life = redis.call('HMGET', p .. 'lifetime', 'tokens_saved', 'compression_savings_usd')
local point = {timestamp = nowIso, total_tokens_saved = tonumber(life[1]) or 0, compression_savings_usd = tonumber(life[2]) or 0}
local last = redis.call('ZREVRANGE', p .. 'hist', 0, 0)[1]
if last and tonumber(last) >= minute then
  local prev = cjson.decode(redis.call('HGET', p .. 'cp', last) or '{}')
  if prev.timestamp and prev.timestamp > nowIso then point.timestamp = prev.timestamp end
  redis.call('HSET', p .. 'cp', last, cjson.encode(point))
else
  redis.call('ZADD', p .. 'hist', minute, tostring(minute))
  redis.call('HSET', p .. 'cp', tostring(minute), cjson.encode(point))
end
local n = redis.call('ZCARD', p .. 'hist')
if n > maxCp then
  for _, m in ipairs(redis.call('ZRANGE', p .. 'hist', 0, n - maxCp - 1)) do
    redis.call('HDEL', p .. 'cp', m)
    redis.call('ZREM', p .. 'hist', m)
  end
end
return n
`;

/** The savings script on an ioredis client. */
export interface SavingsCommands {
  svcSavingsApply(
    prefix: string,
    nowIso: string,
    minute: number,
    entries: string,
    maxCheckpoints: number,
    cutoffs: string,
  ): Promise<number>;
}

/** Defines the savings script on `redis` (EVALSHA, reloaded by ioredis after a Redis restart). */
export function savingsCommands(redis: Redis): SavingsCommands {
  if (!('svcSavingsApply' in redis))
    redis.defineCommand('svcSavingsApply', { numberOfKeys: 0, lua: LUA_SAVINGS_APPLY });
  return redis as unknown as SavingsCommands;
}
