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
  /**
   * The proxy savings above by project, model and client (issue 18, item 7):
   * value -> `[tokens_saved, compression_savings_usd, requests,
   * unpriced_tokens_saved]`. Bounded: at most `BY_MAX_VALUES` values per
   * dimension in a rollup bucket (`BY_LIFETIME_MAX_VALUES` in `lifetime`),
   * the rest under `other`. Absent in files written before it existed.
   */
  by?: AmountBy;
}

/** Dimensions the savings file records per saving (never the key hash). */
export const HISTORY_DIMENSIONS = ['project', 'model', 'client'] as const;
export type HistoryDimension = (typeof HISTORY_DIMENSIONS)[number];
/** `[tokens_saved, compression_savings_usd, requests, unpriced_tokens_saved]` of one value. */
export type ByAmount = [number, number, number, number];
export type AmountBy = Partial<Record<HistoryDimension, Record<string, ByAmount>>>;
/** Values per dimension kept in one rollup bucket; later values are added to `other`. */
export const BY_MAX_VALUES = 8;
/** Values per dimension kept in the lifetime totals. */
export const BY_LIFETIME_MAX_VALUES = 100;
/** The value past the caps. */
export const BY_OTHER = 'other';

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

/** Adds `b` into `a` (in place); `byMax` bounds the values per dimension of `a.by`. */
export function addAmount(a: SavingsAmount, b: SavingsAmount, byMax = BY_MAX_VALUES): void {
  addTotals(a, b);
  if (b.by) {
    a.by ??= {};
    addBy(a.by, b.by, byMax);
  }
}

/** Adds the totals of `b` (everything but its `by` part) into `a`. */
function addTotals(a: SavingsAmount, b: Omit<SavingsAmount, 'by'>): void {
  a.tokens_saved += b.tokens_saved;
  a.compression_savings_usd = roundUsd(a.compression_savings_usd + b.compression_savings_usd);
  a.requests += b.requests;
  a.unpriced_tokens_saved += b.unpriced_tokens_saved;
  a.cli_tokens_saved = (a.cli_tokens_saved ?? 0) + (b.cli_tokens_saved ?? 0);
  a.cli_runs = (a.cli_runs ?? 0) + (b.cli_runs ?? 0);
  a.cache_aware_savings_usd = roundUsd((a.cache_aware_savings_usd ?? 0) + (b.cache_aware_savings_usd ?? 0));
}

function addBy(into: AmountBy, from: AmountBy, max: number): void {
  for (const d of HISTORY_DIMENSIONS) {
    const values = from[d];
    if (!values) continue;
    into[d] ??= {};
    const have = into[d];
    for (const [value, amount] of Object.entries(values))
      addByValue(have, value, amount[0], amount[1], amount[2], amount[3], max);
  }
}

/** Adds one value's amounts into a dimension's rows (`other` once `max` values are named). */
function addByValue(
  have: Record<string, ByAmount>,
  value: string,
  tokens: number,
  usd: number,
  requests: number,
  unpriced: number,
  max: number,
): void {
  let key = value;
  if (!(key in have) && key !== BY_OTHER) {
    const named = Object.keys(have).filter((k) => k !== BY_OTHER).length;
    if (named >= max) key = BY_OTHER;
  }
  const row: ByAmount = have[key] ?? [0, 0, 0, 0];
  have[key] = row;
  row[0] += tokens;
  row[1] = roundUsd(row[1] + usd);
  row[2] += requests;
  row[3] += unpriced;
}

/** An amount without its `by` part (what `/stats` and the plain history show). */
export function withoutBy(amount: SavingsAmount): SavingsAmount {
  const { by: _by, ...rest } = amount;
  return rest;
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
  /** Project, model and client of the request (proxy savings only). */
  attribution?: Partial<Record<HistoryDimension, string>>;
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
  const unpriced = record.savingsUsd === undefined ? record.tokensSaved : 0;
  if (record.cacheAwareOnly) {
    addAmount(amount, { ...zeroAmount(), cache_aware_savings_usd: record.cacheAwareUsd ?? 0 });
    return;
  }
  // one proxied saving: its totals, then its attribution added row by row (no amount built for it)
  const usd = record.savingsUsd ?? 0;
  addTotals(amount, {
    tokens_saved: record.tokensSaved,
    compression_savings_usd: usd,
    requests: 1,
    unpriced_tokens_saved: unpriced,
    cli_tokens_saved: 0,
    cli_runs: 0,
    cache_aware_savings_usd: record.cacheAwareUsd ?? 0,
  });
  const attribution = record.attribution;
  if (attribution) {
    amount.by ??= {};
    for (const d of HISTORY_DIMENSIONS) {
      const value = attribution[d];
      if (value === undefined) continue;
      amount.by[d] ??= {};
      // Unwritten deltas keep as many values as the lifetime totals; the rollup buckets cap them when applied.
      addByValue(amount.by[d], value, record.tokensSaved, usd, 1, unpriced, BY_LIFETIME_MAX_VALUES);
    }
  }
}

/** Adds every entry of `from` into `into`. */
export function mergeDeltas(into: SavingsDelta, from: SavingsDelta): void {
  for (const [hour, amount] of from) {
    const have = into.get(hour);
    if (have) addAmount(have, amount, BY_LIFETIME_MAX_VALUES);
    else into.set(hour, structuredClone(amount));
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
    addAmount(data.lifetime, amount, BY_LIFETIME_MAX_VALUES);
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
