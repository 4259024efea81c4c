import type { Budget } from './budget.js';
import type { RateLimiter } from './rate-limiter.js';
import type { ResponseCache } from './response-cache.js';

/** The three guards of one server. An absent one is disabled. */
export interface Guards {
  /** Undefined with `--no-cache`. */
  cache: ResponseCache | undefined;
  /** Undefined with `--no-rate-limit`. */
  rateLimiter: RateLimiter | undefined;
  /** Always present: spend is tracked even with no limit set. */
  budget: Budget;
  /** Writes pending state (the budget file); run on shutdown. */
  close(): Promise<void>;
}
