import { join } from 'node:path';
import type { Config } from '../config/options.js';
import type { Logger } from '../log.js';
import type { SharedStore } from '../store/redis.js';
import { type BudgetLimits, budgetStateLines, createMemoryBudget } from './budget.js';
import { createBudgetFile } from './budget-file.js';
import { createMemoryRateLimiter } from './rate-limiter.js';
import { createRedisGuards } from './redis-guards.js';
import { createMemoryResponseCache } from './response-cache.js';
import type { Guards } from './types.js';

export * from './budget.js';
export * from './budget-file.js';
export * from './budget-periods.js';
export * from './cache-key.js';
export * from './cost-estimate.js';
export * from './rate-limiter.js';
export * from './response-cache.js';
export * from './response-recorder.js';
export type { Guards } from './types.js';

/** File under the svc home that keeps the budget's spend across restarts. */
export const BUDGET_FILE_NAME = 'budget.json';

export interface GuardsOptions {
  now: () => number;
  logger: Logger;
  /** The shared store (`--store`): then the guards live in Redis, shared by the fleet. */
  store?: SharedStore | undefined;
}

/**
 * Builds the in-memory guards from the configuration, restores the budget's
 * spend from `<home>/budget.json` and logs the budget state (spec 7: logs
 * show budget state).
 */
export async function createGuards(config: Config, options: GuardsOptions): Promise<Guards> {
  const { now, logger } = options;
  if (options.store) return createRedisGuards(config, options.store, { now, logger });
  const cache = config.cache
    ? createMemoryResponseCache({
        maxEntries: config.cacheMaxEntries,
        ttlS: config.cacheTtl,
        maxBytes: config.cacheMaxBytes,
        now,
      })
    : undefined;
  const rateLimiter = config.rateLimit
    ? createMemoryRateLimiter({ rpm: config.rateLimitRpm, tpm: config.rateLimitTpm, now })
    : undefined;
  const limits: BudgetLimits = {};
  if (config.budgetHourly !== undefined) limits.hourly = config.budgetHourly;
  if (config.budget !== undefined) limits.daily = config.budget;
  if (config.budgetMonthly !== undefined) limits.monthly = config.budgetMonthly;
  const file = createBudgetFile(join(config.home, BUDGET_FILE_NAME), { logger });
  const initial = await file.load();
  const budget = createMemoryBudget({
    limits,
    now,
    logger,
    ...(initial ? { initial } : {}),
    persist: (snapshot) => file.write(snapshot),
  });
  for (const line of budgetStateLines(await budget.status())) logger.info(line);
  return { cache, rateLimiter, budget, close: () => file.flush() };
}
