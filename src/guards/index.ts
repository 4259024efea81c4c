import type { Config } from '../config/options.js';
import type { Logger } from '../log.js';
import { type Budget, budgetStateLines, createMemoryBudget } from './budget.js';
import { createMemoryRateLimiter, type RateLimiter } from './rate-limiter.js';
import { createMemoryResponseCache, type ResponseCache } from './response-cache.js';

export * from './budget.js';
export * from './budget-periods.js';
export * from './cache-key.js';
export * from './cost-estimate.js';
export * from './key-hash.js';
export * from './rate-limiter.js';
export * from './response-cache.js';
export * from './stream-recorder.js';

/** The three guards of one server. An absent one is disabled. */
export interface Guards {
  /** Undefined with `--no-cache`. */
  cache: ResponseCache | undefined;
  /** Undefined with `--no-rate-limit`. */
  rateLimiter: RateLimiter | undefined;
  /** Always present: spend is tracked even with no limit set. */
  budget: Budget;
}

export interface GuardsOptions {
  now: () => number;
  logger: Logger;
}

/**
 * Builds the in-memory guards from the configuration and logs the budget
 * state (spec 7: logs show budget state).
 */
export async function createGuards(config: Config, options: GuardsOptions): Promise<Guards> {
  const { now, logger } = options;
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
  const limits: Partial<Record<'hourly' | 'daily' | 'monthly', number>> = {};
  if (config.budgetHourly !== undefined) limits.hourly = config.budgetHourly;
  if (config.budget !== undefined) limits.daily = config.budget;
  if (config.budgetMonthly !== undefined) limits.monthly = config.budgetMonthly;
  const budget = createMemoryBudget({ limits, now, logger });
  for (const line of budgetStateLines(await budget.status())) logger.info(line);
  return { cache, rateLimiter, budget };
}
