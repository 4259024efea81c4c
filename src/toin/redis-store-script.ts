import type { Redis } from 'ioredis';

/*
 * TOIN keys (under `<prefix>toin:`): `shapes` zset shape -> last seen (ms);
 * `s:<shape>` hash {tool, fields (JSON), nf, compressed, dropped, retrieved,
 * firstSeen, lastSeen, f:<field> counts}; `hashes` hash CCR hash -> JSON list
 * of shapes, `hashorder` zset CCR hash -> ms (bound); `seen:<event>:<hash>`
 * marks content already counted by some replica (a day), so the fleet counts
 * each compressed or dropped output once, as one process does.
 *
 * ARGV: key prefix, ops (JSON), max shapes, max hashes, seen TTL (s).
 * An op is {k:'o', event, shape, tool, fields, nf, hashes, at, ms} (observed)
 * or {k:'r', hash, fields, at, ms} (retrieved). Counters only grow by HINCRBY.
 */
const LUA_TOIN_APPLY = `
local p = ARGV[1]
local ops = cjson.decode(ARGV[2])
local maxShapes, maxHashes, seenTtl = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local function touch(shape, k, at, ms)
  local last = redis.call('HGET', k, 'lastSeen')
  if (not last) or at > last then
    redis.call('HSET', k, 'lastSeen', at)
    redis.call('ZADD', p .. 'shapes', ms, shape)
  end
end
for _, op in ipairs(ops) do
  if op.k == 'o' then
    local fresh = #op.hashes == 0
    for _, h in ipairs(op.hashes) do
      if redis.call('SET', p .. 'seen:' .. op.event .. ':' .. h, '1', 'NX', 'EX', seenTtl) then fresh = true end
    end
    if fresh then
      local k = p .. 's:' .. op.shape
      if redis.call('EXISTS', k) == 0 then
        redis.call('HSET', k, 'tool', op.tool, 'fields', op.fields, 'nf', op.nf, 'firstSeen', op.at)
      elseif op.nf > (tonumber(redis.call('HGET', k, 'nf')) or 0) then
        redis.call('HSET', k, 'fields', op.fields, 'nf', op.nf)
      end
      redis.call('HINCRBY', k, op.event, 1)
      touch(op.shape, k, op.at, op.ms)
      for _, h in ipairs(op.hashes) do
        local cur = redis.call('HGET', p .. 'hashes', h)
        local list = cur and cjson.decode(cur) or {}
        local has = false
        for _, s in ipairs(list) do if s == op.shape then has = true end end
        if not has then
          table.insert(list, op.shape)
          redis.call('HSET', p .. 'hashes', h, cjson.encode(list))
        end
        redis.call('ZADD', p .. 'hashorder', op.ms, h)
      end
    end
  else
    local cur = redis.call('HGET', p .. 'hashes', op.hash)
    if cur then
      for _, shape in ipairs(cjson.decode(cur)) do
        local k = p .. 's:' .. shape
        if redis.call('EXISTS', k) == 1 then
          redis.call('HINCRBY', k, 'retrieved', 1)
          local known = {}
          for _, f in ipairs(cjson.decode(redis.call('HGET', k, 'fields') or '[]')) do known[f] = true end
          for _, f in ipairs(op.fields) do
            if known[f] or known[string.match(f, '([^.]+)$') or f] then redis.call('HINCRBY', k, 'f:' .. f, 1) end
          end
          touch(shape, k, op.at, op.ms)
        end
      end
    end
  end
end
local n = redis.call('ZCARD', p .. 'shapes')
if n > maxShapes then
  for _, s in ipairs(redis.call('ZRANGE', p .. 'shapes', 0, n - maxShapes - 1)) do
    redis.call('DEL', p .. 's:' .. s)
    redis.call('ZREM', p .. 'shapes', s)
  end
end
n = redis.call('ZCARD', p .. 'hashorder')
if n > maxHashes then
  for _, h in ipairs(redis.call('ZRANGE', p .. 'hashorder', 0, n - maxHashes - 1)) do
    redis.call('HDEL', p .. 'hashes', h)
    redis.call('ZREM', p .. 'hashorder', h)
  end
end
return #ops
`;

/** The TOIN script on an ioredis client. */
export interface ToinCommands {
  svcToinApply(
    prefix: string,
    ops: string,
    maxShapes: number,
    maxHashes: number,
    seenTtlS: number,
  ): Promise<number>;
}

/** Defines the TOIN script on `redis` (EVALSHA, reloaded by ioredis after a Redis restart). */
export function toinCommands(redis: Redis): ToinCommands {
  if (!('svcToinApply' in redis))
    redis.defineCommand('svcToinApply', { numberOfKeys: 0, lua: LUA_TOIN_APPLY });
  return redis as unknown as ToinCommands;
}
