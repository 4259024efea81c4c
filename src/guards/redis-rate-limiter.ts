import type { Redis } from 'ioredis';
import type { Logger } from '../log.js';
import type { SharedStore } from '../store/redis.js';
import {
  createMemoryRateLimiter,
  type RateDecision,
  type RateLimiter,
  type RateLimitSnapshot,
  type RateTicket,
} from './rate-limiter.js';
import { refill, type TokenBucket } from './token-bucket.js';

const MINUTE_MS = 60_000;

/*
 * One hash per key: `rl:<keyHash>` {rl: requests level, tl: tokens level, at: ms}.
 * The same token-bucket arithmetic as `token-bucket.ts`, done inside Redis so
 * that one check is one atomic script for the whole fleet. The key expires
 * once both buckets would be full again (a missing key is a full bucket).
 */
const LUA_BUCKETS = `
local now, rpm, tpm, win = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local h = redis.call('HMGET', KEYS[1], 'rl', 'tl', 'at')
local rl, tl, at = tonumber(h[1]) or rpm, tonumber(h[2]) or tpm, tonumber(h[3]) or now
local elapsed = math.max(0, now - at)
rl = math.min(rpm, rl + elapsed * rpm / win)
tl = math.min(tpm, tl + elapsed * tpm / win)
at = math.max(at, now)
local function save()
  redis.call('HSET', KEYS[1], 'rl', tostring(rl), 'tl', tostring(tl), 'at', tostring(at))
  local full = math.max((rpm - rl) / rpm, (tpm - tl) / tpm)
  redis.call('PEXPIRE', KEYS[1], math.ceil(full * win) + 1000)
end
`;

/** ARGV: now, rpm, tpm, windowMs, estimate. Returns {allowed, rl, tl, waitRequestsMs, waitTokensMs}. */
const LUA_ACQUIRE = `${LUA_BUCKETS}
local est = tonumber(ARGV[5])
local need = math.min(est, tpm)
local wr, wt = 0, 0
if 1 - rl > 0 then wr = math.ceil((1 - rl) * win / rpm) end
if need - tl > 0 then wt = math.ceil((need - tl) * win / tpm) end
local allowed = 0
if wr <= 0 and wt <= 0 then
  rl = rl - 1
  tl = tl - est
  allowed = 1
end
save()
return {allowed, tostring(rl), tostring(tl), wr, wt}
`;

/** ARGV: now, rpm, tpm, windowMs, reserved, actual. Gives back what the estimate over-took. */
const LUA_SETTLE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
${LUA_BUCKETS}
tl = math.min(tpm, tl + tonumber(ARGV[5]) - math.max(0, tonumber(ARGV[6])))
save()
return 1
`;

interface RateCommands {
  svcRateAcquire(key: string, ...argv: number[]): Promise<[number, string, string, number, number]>;
  svcRateSettle(key: string, ...argv: number[]): Promise<number>;
}

function defineScripts(redis: Redis): RateCommands {
  if (!('svcRateAcquire' in redis))
    redis.defineCommand('svcRateAcquire', { numberOfKeys: 1, lua: LUA_ACQUIRE });
  if (!('svcRateSettle' in redis)) redis.defineCommand('svcRateSettle', { numberOfKeys: 1, lua: LUA_SETTLE });
  return redis as unknown as RateCommands;
}

/** Options of `createRedisRateLimiter` (per-minute limits of `--rate-limit-*`). */
export interface RedisRateLimiterOptions {
  rpm: number;
  tpm: number;
  now?: () => number;
  logger: Logger;
}

/**
 * The rate limiter in Redis: one bucket pair per key for the whole fleet,
 * one Lua script per check. While Redis is unreachable it fails open to
 * local in-memory buckets (each replica then enforces the limits on its
 * own, so the fleet admits up to replicas x the limit); requests admitted
 * locally are settled locally. Shared limiting resumes on reconnection.
 */
export function createRedisRateLimiter(store: SharedStore, options: RedisRateLimiterOptions): RateLimiter {
  const now = options.now ?? Date.now;
  const { rpm, tpm } = options;
  const cmd = defineScripts(store.redis);
  const local = createMemoryRateLimiter({ rpm, tpm, now, maxKeys: 10_000 });
  const localTickets = new WeakSet<RateTicket>();
  const bucketKey = (keyHash: string) => store.key('rl', keyHash);
  const snapshot = (rl: number, tl: number): RateLimitSnapshot => ({
    limitRequests: rpm,
    remainingRequests: Math.max(0, Math.floor(rl)),
    limitTokens: tpm,
    remainingTokens: Math.max(0, Math.floor(tl)),
  });
  let fallbackNoted = false;
  const fallback = async (keyHash: string, estimate: number, err: unknown): Promise<RateDecision> => {
    store.noteFailure(err);
    if (!fallbackNoted) {
      fallbackNoted = true;
      options.logger.warn('rate limit: store unreachable; limiting per replica until it is back', {
        error: (err as Error).message,
      });
    }
    const decision = await local.acquire(keyHash, estimate);
    if (decision.allowed) localTickets.add(decision.ticket);
    return decision;
  };

  return {
    async acquire(keyHash, estimatedTokens) {
      const estimate = Math.max(0, Math.ceil(estimatedTokens));
      if (!store.healthy) return fallback(keyHash, estimate, new Error('store unreachable'));
      let reply: [number, string, string, number, number];
      try {
        reply = await cmd.svcRateAcquire(bucketKey(keyHash), now(), rpm, tpm, MINUTE_MS, estimate);
      } catch (err) {
        return fallback(keyHash, estimate, err);
      }
      fallbackNoted = false;
      const [allowed, rl, tl, waitRequests, waitTokens] = reply;
      const snap = snapshot(Number(rl), Number(tl));
      if (allowed === 1)
        return { allowed: true, ticket: { keyHash, reservedTokens: estimate }, snapshot: snap };
      return {
        allowed: false,
        limit: waitRequests >= waitTokens ? 'requests' : 'tokens',
        retryAfterS: Math.max(1, Math.ceil(Math.max(waitRequests, waitTokens) / 1000)),
        snapshot: snap,
      };
    },
    async settle(ticket, actualTokens) {
      if (actualTokens === undefined) return;
      if (localTickets.has(ticket)) return local.settle(ticket, actualTokens);
      try {
        await cmd.svcRateSettle(
          bucketKey(ticket.keyHash),
          now(),
          rpm,
          tpm,
          MINUTE_MS,
          ticket.reservedTokens,
          actualTokens,
        );
      } catch (err) {
        // Lost with the store: the estimate stays taken, which errs on the safe side.
        store.noteFailure(err);
      }
    },
    async peek(keyHash) {
      let h: (string | null)[];
      try {
        h = await store.redis.hmget(bucketKey(keyHash), 'rl', 'tl', 'at');
      } catch {
        return local.peek(keyHash);
      }
      const t = now();
      if (h[2] === null || h[2] === undefined) return snapshot(rpm, tpm);
      const at = Number(h[2]);
      const requests: TokenBucket = { level: Number(h[0]), at };
      const tokens: TokenBucket = { level: Number(h[1]), at };
      return snapshot(refill(requests, rpm, MINUTE_MS, t), refill(tokens, tpm, MINUTE_MS, t));
    },
  };
}
