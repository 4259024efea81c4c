import type { BreakdownRecord } from './breakdown.js';
import type { LiveTotals } from './live-stats.js';
import type { CacheCounts } from './metrics.js';
import { type Checkpoint, type SavingsAmount, withoutBy } from './savings-data.js';

/** How many of the newest checkpoints `/stats` shows as `persistent_savings.recent_history`. */
export const RECENT_HISTORY_SIZE = 20;

/**
 * Budget state shown in `/stats` (`budget`), supplied by the budget guard
 * through `ctx.budgetStatus`. Without one: `{ enabled: false }`.
 */
export type BudgetStatus = { enabled: boolean } & Record<string, unknown>;

/** The stats record of spec section 2 (`GET /stats`), plus documented extras. */
export interface StatsRecord {
  persistent_savings: {
    lifetime: SavingsAmount;
    recent_history: Checkpoint[];
    /** State of the savings file when it was read: `ok`, `missing` (nothing recorded yet) or `malformed`. */
    file_state: 'ok' | 'missing' | 'malformed';
  };
  requests: LiveTotals['requests'];
  tokens: LiveTotals['tokens'];
  cost: LiveTotals['cost'] & { pricing_as_of: string };
  /** `--observe`: projected savings (what compression would have saved), apart from real ones. */
  projected: LiveTotals['projected'];
  cache: { enabled: boolean; entries: number; total_hits: number; misses: number };
  savings_history: Checkpoint[];
  budget: BudgetStatus;
  started_at: string;
  uptime_s: number;
  /**
   * Markers redeemed through this server since it started: by its retrieval
   * endpoint (`svc mcp`, clients) and by its own retrieval loop (`tool`).
   */
  retrievals?: RetrievalCounts;
  /**
   * Requests, tokens, cost and savings of this server since it started, by
   * project, model, client and API-key hash (issue 18, item 7); each
   * dimension adds up to `requests.total`, `tokens.*` and `cost.*`.
   */
  breakdown?: BreakdownRecord;
  /**
   * With `--store`: the shared store, and this replica's own session
   * counters (the top-level `requests`, `tokens` and `cost` are the fleet's).
   */
  store?: {
    backend: 'redis';
    url: string;
    prefix: string;
    healthy: boolean;
    replica: { id: string } & Pick<LiveTotals, 'requests' | 'tokens' | 'cost'>;
  };
}

/** Counts of `retrieved` events: found ones by where they were answered, and unknown hashes. */
export interface RetrievalCounts {
  total: number;
  endpoint: number;
  tool: number;
  not_found: number;
}

export interface StatsRecordInput {
  totals: LiveTotals;
  sessionHistory: Checkpoint[];
  lifetime: SavingsAmount;
  history: Checkpoint[];
  fileState: StatsRecord['persistent_savings']['file_state'];
  pricingAsOf: string;
  cacheEnabled: boolean;
  cache: CacheCounts | undefined;
  budget: BudgetStatus | undefined;
  startedAt: number;
  now: number;
}

/** Assembles `/stats` from the live counters, the savings file and the guards' providers. */
export function buildStatsRecord(input: StatsRecordInput): StatsRecord {
  const { totals } = input;
  return {
    persistent_savings: {
      lifetime: withoutBy(input.lifetime),
      recent_history: input.history.slice(-RECENT_HISTORY_SIZE),
      file_state: input.fileState,
    },
    requests: totals.requests,
    tokens: totals.tokens,
    cost: { ...totals.cost, pricing_as_of: input.pricingAsOf },
    projected: totals.projected,
    cache: {
      enabled: input.cacheEnabled,
      entries: input.cache?.entries ?? 0,
      // Without the cache's own counters, hits are the requests answered from it.
      total_hits: input.cache?.hits ?? totals.requests.cached,
      misses: input.cache?.misses ?? 0,
    },
    savings_history: input.sessionHistory,
    budget: input.budget ?? { enabled: false },
    started_at: new Date(input.startedAt).toISOString(),
    uptime_s: Math.max(0, Math.round((input.now - input.startedAt) / 1000)),
  };
}
