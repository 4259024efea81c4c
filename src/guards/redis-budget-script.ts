import type { Redis } from 'ioredis';

/*
 * Budget keys (under the prefix): `budget:<period>:<windowStartMs>` hash
 * {spend, reserved} in integer nano-USD, expiring a day after its window;
 * `budget:holds` zset hold id -> expiry (ms); `budget:hold` hash hold id ->
 * "amount|windowKey|windowKey|windowKey". A hold whose replica died before
 * settling expires and is settled at its amount (moved from `reserved` to
 * `spend` of the windows it was made in): its request was forwarded and its
 * cost is unknown, so the estimate is charged, and no reservation leaks.
 *
 * KEYS: holds, hold info, hourly window, daily window, monthly window.
 * Every script returns {spendH, reservedH, spendD, reservedD, spendM, reservedM}
 * (reserve puts `allowed` first).
 */
const LUA_COMMON = `
local function release(id, charge)
  local info = redis.call('HGET', KEYS[2], id)
  if info then
    local amount
    for part in string.gmatch(info, '[^|]+') do
      if not amount then amount = part
      elseif redis.call('EXISTS', part) == 1 then
        redis.call('HINCRBY', part, 'reserved', '-' .. amount)
        if charge then redis.call('HINCRBY', part, 'spend', amount) end
      end
    end
    redis.call('HDEL', KEYS[2], id)
  end
  redis.call('ZREM', KEYS[1], id)
end
local function purge(now)
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, 100)) do release(id, true) end
end
local function windows()
  local out = {}
  for i = 3, 5 do
    local w = redis.call('HMGET', KEYS[i], 'spend', 'reserved')
    out[#out + 1] = tonumber(w[1]) or 0
    out[#out + 1] = math.max(0, tonumber(w[2]) or 0)
  end
  return out
end
`;

/**
 * ARGV: now, hold id, amount, hold expiry (ms), limit x3 ('' = none), window TTL x3 (ms).
 * Admits when every limited window's spend + reserved is under its limit,
 * then holds `amount` in all three windows.
 */
const LUA_RESERVE = `${LUA_COMMON}
purge(tonumber(ARGV[1]))
local w = windows()
for i = 1, 3 do
  local limit = tonumber(ARGV[4 + i])
  if limit and w[2 * i - 1] + w[2 * i] >= limit then
    table.insert(w, 1, 0)
    return w
  end
end
if tonumber(ARGV[3]) > 0 then
  for i = 3, 5 do
    redis.call('HINCRBY', KEYS[i], 'reserved', ARGV[3])
    redis.call('PEXPIRE', KEYS[i], ARGV[5 + i])
  end
  redis.call('ZADD', KEYS[1], ARGV[4], ARGV[2])
  redis.call('HSET', KEYS[2], ARGV[2], ARGV[3] .. '|' .. KEYS[3] .. '|' .. KEYS[4] .. '|' .. KEYS[5])
  w = windows()
end
table.insert(w, 1, 1)
return w
`;

/**
 * ARGV: now, hold id ('' = none), charge, window TTL x3 (ms). Releases the
 * hold (from the windows it was made in) and charges the windows given
 * (those in which the request finished). With no id and charge 0: status.
 */
const LUA_SETTLE = `${LUA_COMMON}
purge(tonumber(ARGV[1]))
if ARGV[2] ~= '' then release(ARGV[2], false) end
if tonumber(ARGV[3]) > 0 then
  for i = 3, 5 do
    redis.call('HINCRBY', KEYS[i], 'spend', ARGV[3])
    redis.call('PEXPIRE', KEYS[i], ARGV[1 + i])
  end
end
return windows()
`;

/** The budget scripts on an ioredis client (defined once per client). */
export interface BudgetCommands {
  svcBudgetReserve(keys: string[], argv: (string | number)[]): Promise<number[]>;
  svcBudgetSettle(keys: string[], argv: (string | number)[]): Promise<number[]>;
}

/** Defines the budget's Lua scripts on `redis` (EVALSHA, reloaded by ioredis after a Redis restart). */
export function budgetCommands(redis: Redis): BudgetCommands {
  if (!('svcBudgetReserve' in redis))
    redis.defineCommand('svcBudgetReserve', { numberOfKeys: 5, lua: LUA_RESERVE });
  if (!('svcBudgetSettle' in redis))
    redis.defineCommand('svcBudgetSettle', { numberOfKeys: 5, lua: LUA_SETTLE });
  return redis as unknown as BudgetCommands;
}
