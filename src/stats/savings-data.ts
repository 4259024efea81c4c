import { iso, PERIODS, type Period, periodStart, periodsBack } from './periods.js';

/** Version of the savings file and of the `/stats-history` record. */
export const SCHEMA_VERSION = 1;

/**
 * Bound of `history`: at most this many checkpoints, oldest dropped first.
 * Checkpoints are at most one per UTC minute (a later write in the same
 * minute replaces that minute's checkpoint), so 1000 checkpoints cover at
 * least 16 hours of non-stop traffic and much longer for ordinary use.
 */
export const HISTORY_MAX_CHECKPOINTS = 1000;

/** How many periods of each rollup the file keeps (counting the current one). */
export const ROLLUP_RETENTION: Readonly<Record<Period, number>> = {
  hourly: 168, // 7 days
  daily: 366, // a year
  weekly: 260, // 5 years
  monthly: 120, // 10 years
};

/** Amounts recorded over some span. */
export interface SavingsAmount {
  tokens_saved: number;
  /** USD of the saved tokens at each model's input price (tokens of unpriced models excluded). */
  compression_savings_usd: number;
  /** Recorded savings events (proxied requests, `/v1/compress` calls, `svc compress` runs). */
  requests: number;
  /** Tokens saved for models without a known price: in `tokens_saved`, not in the USD. */
  unpriced_tokens_saved: number;
  /**
   * Tokens saved by offline `svc compress` runs (source `cli`): nothing was
   * sent to a provider, so they are never USD and never in `tokens_saved`.
   */
  cli_tokens_saved: number;
  /** `svc compress` inputs that saved tokens (source `cli`). */
  cli_runs: number;
  /**
   * Cache-aware USD saved by proxied requests: the estimate without svc less
   * the billed cost (docs/stats.md); negative when svc cost more. Absent in
   * files written before it: 0.
   */
  cache_aware_savings_usd: number;
}

/** A point of the lifetime totals, written when savings are flushed. */
export interface Checkpoint {
  timestamp: string;
  total_tokens_saved: number;
  compression_savings_usd: number;
}

/** The savings file (`proxy_savings.json`). */
export interface SavingsData {
  schema_version: typeof SCHEMA_VERSION;
  created_at: string;
  updated_at: string;
  lifetime: SavingsAmount;
  history: Checkpoint[];
  /** Period start (UTC ISO) -> amount, per period. */
  rollups: Record<Period, Record<string, SavingsAmount>>;
}

/** Savings not yet written, keyed by the start (ms) of their UTC hour. */
export type SavingsDelta = Map<number, SavingsAmount>;

/** A zero amount. */
export function zeroAmount(): SavingsAmount {
  return {
    tokens_saved: 0,
    compression_savings_usd: 0,
    requests: 0,
    unpriced_tokens_saved: 0,
    cli_tokens_saved: 0,
    cli_runs: 0,
    cache_aware_savings_usd: 0,
  };
}

/** A fresh, empty file body. */
export function emptySavings(now: number): SavingsData {
  return {
    schema_version: SCHEMA_VERSION,
    created_at: iso(now),
    updated_at: iso(now),
    lifetime: zeroAmount(),
    history: [],
    rollups: { hourly: {}, daily: {}, weekly: {}, monthly: {} },
  };
}

const roundUsd = (usd: number) => Math.round(usd * 1e10) / 1e10;

/** Adds `b` into `a` (in place). */
export function addAmount(a: SavingsAmount, b: SavingsAmount): void {
  a.tokens_saved += b.tokens_saved;
  a.compression_savings_usd = roundUsd(a.compression_savings_usd + b.compression_savings_usd);
  a.requests += b.requests;
  a.unpriced_tokens_saved += b.unpriced_tokens_saved;
  a.cli_tokens_saved = (a.cli_tokens_saved ?? 0) + (b.cli_tokens_saved ?? 0);
  a.cli_runs = (a.cli_runs ?? 0) + (b.cli_runs ?? 0);
  a.cache_aware_savings_usd = roundUsd((a.cache_aware_savings_usd ?? 0) + (b.cache_aware_savings_usd ?? 0));
}

/** One saving: `savingsUsd` undefined means the model's price is unknown. */
export interface SavingsRecord {
  time: number;
  tokensSaved: number;
  savingsUsd: number | undefined;
  /** Who saved it: a proxied or `/v1/compress` request (default), or an offline `svc compress` run (`cli`, tokens only). */
  source?: 'proxy' | 'cli';
  /** Cache-aware USD of a proxied request (signed), when estimated. */
  cacheAwareUsd?: number;
  /** Only the cache-aware USD (a request that saved no tokens): not counted in `requests`. */
  cacheAwareOnly?: boolean;
}

/** Adds one saving to a pending delta. */
export function addToDelta(delta: SavingsDelta, record: SavingsRecord): void {
  const hour = periodStart('hourly', record.time);
  let amount = delta.get(hour);
  if (!amount) {
    amount = zeroAmount();
    delta.set(hour, amount);
  }
  if (record.source === 'cli') {
    addAmount(amount, { ...zeroAmount(), cli_tokens_saved: record.tokensSaved, cli_runs: 1 });
    return;
  }
  if (record.cacheAwareOnly) {
    addAmount(amount, { ...zeroAmount(), cache_aware_savings_usd: record.cacheAwareUsd ?? 0 });
    return;
  }
  addAmount(amount, {
    ...zeroAmount(),
    cache_aware_savings_usd: record.cacheAwareUsd ?? 0,
    tokens_saved: record.tokensSaved,
    compression_savings_usd: record.savingsUsd ?? 0,
    requests: 1,
    unpriced_tokens_saved: record.savingsUsd === undefined ? record.tokensSaved : 0,
  });
}

/** Adds every entry of `from` into `into`. */
export function mergeDeltas(into: SavingsDelta, from: SavingsDelta): void {
  for (const [hour, amount] of from) {
    const have = into.get(hour);
    if (have) addAmount(have, amount);
    else into.set(hour, { ...amount });
  }
}

/**
 * Adds a writer's delta to what is on disk (never replaces another writer's
 * totals), appends a checkpoint of the new lifetime totals, and trims history
 * and rollups to their bounds. Mutates and returns `data`.
 */
export function applyDelta(data: SavingsData, delta: SavingsDelta, now: number): SavingsData {
  if (delta.size === 0) return data;
  for (const [hour, amount] of delta) {
    addAmount(data.lifetime, amount);
    for (const period of PERIODS) {
      const key = iso(periodStart(period, hour));
      const buckets = data.rollups[period];
      const bucket = buckets[key] ?? zeroAmount();
      buckets[key] = bucket;
      addAmount(bucket, amount);
    }
  }
  addCheckpoint(data, now);
  pruneRollups(data, now);
  data.updated_at = iso(now);
  return data;
}

function addCheckpoint(data: SavingsData, now: number): void {
  const point: Checkpoint = {
    timestamp: iso(now),
    total_tokens_saved: data.lifetime.tokens_saved,
    compression_savings_usd: data.lifetime.compression_savings_usd,
  };
  const last = data.history.at(-1);
  const minute = (ms: number) => Math.floor(ms / 60_000);
  const lastMs = last ? Date.parse(last.timestamp) : Number.NaN;
  if (last && minute(lastMs) >= minute(now)) {
    // Same minute (or a writer whose clock is behind): refresh the last point.
    if (lastMs <= now) last.timestamp = point.timestamp;
    last.total_tokens_saved = point.total_tokens_saved;
    last.compression_savings_usd = point.compression_savings_usd;
  } else data.history.push(point);
  if (data.history.length > HISTORY_MAX_CHECKPOINTS) {
    data.history.splice(0, data.history.length - HISTORY_MAX_CHECKPOINTS);
  }
}

/** Drops rollup buckets older than their retention (relative to `now`). */
export function pruneRollups(data: SavingsData, now: number): void {
  for (const period of PERIODS) {
    const oldest = periodsBack(period, now, ROLLUP_RETENTION[period] - 1);
    const buckets = data.rollups[period];
    for (const key of Object.keys(buckets)) if (Date.parse(key) < oldest) delete buckets[key];
  }
}
