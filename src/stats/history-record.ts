import { iso, nextPeriodStart, PERIODS, type Period, periodStart, periodsBack } from './periods.js';
import {
  type Checkpoint,
  ROLLUP_RETENTION,
  type SavingsAmount,
  type SavingsData,
  SCHEMA_VERSION,
  withoutBy,
  zeroAmount,
} from './savings-data.js';

/** Names accepted by `?series=` and `--series`. */
export const SERIES_NAMES = ['history', 'hourly', 'daily', 'weekly', 'monthly'] as const;
export type SeriesName = (typeof SERIES_NAMES)[number];

/** Formats accepted by `?format=`. */
export const EXPORT_FORMATS = ['json', 'csv'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** One period of a rollup series (chart-ready: every period present, zero when idle). */
export interface RollupEntry {
  /** Start of the UTC period (weeks start Monday). */
  timestamp: string;
  /** Start of the next period (exclusive end). */
  period_end: string;
  tokens_saved: number;
  compression_savings_usd: number;
  requests: number;
  /** Tokens saved for models without a known price (included in `tokens_saved`, not in USD). */
  unpriced_tokens_saved: number;
  /** Tokens saved by offline `svc compress` runs (source `cli`): apart, never USD, not in `tokens_saved`. */
  cli_tokens_saved: number;
  cli_runs: number;
  /** Cache-aware USD saved in the period (signed; docs/stats.md). */
  cache_aware_savings_usd: number;
  /** Lifetime tokens saved at the end of the period. */
  total_tokens_saved: number;
  /** Lifetime USD saved at the end of the period. */
  total_compression_savings_usd: number;
}

/** The durable history record of spec section 2 (`GET /stats-history`, `svc history`). */
export interface HistoryRecord {
  schema_version: typeof SCHEMA_VERSION;
  generated_at: string;
  lifetime: SavingsAmount;
  history: Checkpoint[];
  series: Record<Period, RollupEntry[]>;
  exports: {
    default_format: ExportFormat;
    available_formats: ExportFormat[];
    available_series: SeriesName[];
    default_series: SeriesName;
  };
}

const roundUsd = (usd: number) => Math.max(0, Math.round(usd * 1e10) / 1e10);

/**
 * One rollup series from the file's buckets: every period from the oldest
 * kept bucket to the current one, oldest first, with running lifetime totals
 * (lifetime minus everything recorded in later periods, exact because buckets
 * are dropped oldest first).
 */
export function buildSeries(data: SavingsData, period: Period, now: number): RollupEntry[] {
  const oldest = periodsBack(period, now, ROLLUP_RETENTION[period] - 1);
  const buckets = new Map<number, SavingsAmount>();
  for (const [key, amount] of Object.entries(data.rollups[period])) {
    const start = Date.parse(key);
    if (start >= oldest) buckets.set(start, amount);
  }
  if (buckets.size === 0) return [];
  const first = Math.min(...buckets.keys());
  const last = Math.max(periodStart(period, now), ...buckets.keys());
  const entries: RollupEntry[] = [];
  for (let start = first; start <= last; start = nextPeriodStart(period, start)) {
    const amount = buckets.get(start) ?? zeroAmount();
    entries.push({
      timestamp: iso(start),
      period_end: iso(nextPeriodStart(period, start)),
      tokens_saved: amount.tokens_saved,
      compression_savings_usd: amount.compression_savings_usd,
      requests: amount.requests,
      unpriced_tokens_saved: amount.unpriced_tokens_saved,
      cli_tokens_saved: amount.cli_tokens_saved ?? 0,
      cli_runs: amount.cli_runs ?? 0,
      cache_aware_savings_usd: amount.cache_aware_savings_usd ?? 0,
      total_tokens_saved: 0,
      total_compression_savings_usd: 0,
    });
  }
  let tokens = data.lifetime.tokens_saved;
  let usd = data.lifetime.compression_savings_usd;
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i]!;
    entry.total_tokens_saved = tokens;
    entry.total_compression_savings_usd = roundUsd(usd);
    tokens -= entry.tokens_saved;
    usd -= entry.compression_savings_usd;
  }
  return entries;
}

/** Builds the history record from the savings file's content. */
export function buildHistoryRecord(data: SavingsData, now: number): HistoryRecord {
  const series = {} as Record<Period, RollupEntry[]>;
  for (const period of PERIODS) series[period] = buildSeries(data, period, now);
  return {
    schema_version: SCHEMA_VERSION,
    generated_at: iso(now),
    lifetime: withoutBy(data.lifetime),
    history: data.history.map((c) => ({ ...c })),
    series,
    exports: {
      default_format: 'json',
      available_formats: [...EXPORT_FORMATS],
      available_series: [...SERIES_NAMES],
      default_series: 'history',
    },
  };
}
