import type { Config } from '../config/options.js';
import type { Logger } from '../log.js';
import type { SharedStore } from '../store/redis.js';
import type { BudgetLimits } from './budget.js';
import { budgetStateLines } from './budget.js';
import { createRedisBudget } from './redis-budget.js';
import { createRedisResponseCache } from './redis-cache.js';
import { createRedisRateLimiter } from './redis-rate-limiter.js';
import type { Guards } from './types.js';

/** Options of `createRedisGuards`. */
export interface RedisGuardsOptions {
  now: () => number;
  logger: Logger;
  /** How often the fleet's cache counters and budget spend are re-read for `/stats`. Default 1000 ms. */
  refreshMs?: number;
}

/**
 * The guards of a replica with `--store`: response cache, rate limiter and
 * budget all in Redis, behind the same interfaces as the in-memory ones
 * (the request path does not know the difference). The budget file is not
 * used: the fleet's spend lives in Redis.
 */
export async function createRedisGuards(
  config: Config,
  store: SharedStore,
  options: RedisGuardsOptions,
): Promise<Guards> {
  const { now, logger } = options;
  const refreshMs = options.refreshMs ?? 1000;
  const cache = config.cache
    ? createRedisResponseCache(store, {
        maxEntries: config.cacheMaxEntries,
        ttlS: config.cacheTtl,
        maxBytes: config.cacheMaxBytes,
        now,
        logger,
      })
    : undefined;
  const rateLimiter = config.rateLimit
    ? createRedisRateLimiter(store, { rpm: config.rateLimitRpm, tpm: config.rateLimitTpm, now, logger })
    : undefined;
  const limits: BudgetLimits = {};
  if (config.budgetHourly !== undefined) limits.hourly = config.budgetHourly;
  if (config.budget !== undefined) limits.daily = config.budget;
  if (config.budgetMonthly !== undefined) limits.monthly = config.budgetMonthly;
  const budget = createRedisBudget(store, { limits, now, logger, refreshMs });
  for (const line of budgetStateLines(await budget.status())) logger.info(`${line} [fleet, in the store]`);
  await cache?.stats();
  const timer = cache
    ? setInterval(() => {
        if (store.healthy) void cache.stats();
      }, refreshMs)
    : undefined;
  timer?.unref();
  return {
    cache,
    rateLimiter,
    budget,
    async close() {
      if (timer) clearInterval(timer);
      await budget.close();
    },
  };
}
