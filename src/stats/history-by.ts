import { stringify } from 'csv-stringify/sync';
import { SvcError } from '../errors.js';
import type { HistoryExport } from './history-export.js';
import { iso, nextPeriodStart, PERIODS, type Period, periodsBack } from './periods.js';
import {
  BY_LIFETIME_MAX_VALUES,
  BY_MAX_VALUES,
  BY_OTHER,
  HISTORY_DIMENSIONS,
  type HistoryDimension,
  ROLLUP_RETENTION,
  type SavingsAmount,
  type SavingsData,
  SCHEMA_VERSION,
} from './savings-data.js';

/*
 * `/stats-history?by=project|model|client` and `svc history --by`: the
 * proxy savings of the file split by one attribution dimension (issue 18,
 * item 7). Savings recorded before the split existed (or through the shared
 * Redis store, which keeps none) appear under `unattributed`, so every
 * period's values add up to that period's totals.
 */

/** Value of savings the file holds no split for. */
export const UNATTRIBUTED = 'unattributed';

/** One value's savings over a span. */
export interface ByValueAmount {
  value: string;
  tokens_saved: number;
  compression_savings_usd: number;
  requests: number;
  unpriced_tokens_saved: number;
}

/** One value's savings in one period. */
export interface ByPeriodEntry extends ByValueAmount {
  timestamp: string;
  period_end: string;
}

/** The record `?by=` answers with as JSON. */
export interface HistoryByRecord {
  schema_version: typeof SCHEMA_VERSION;
  generated_at: string;
  by: HistoryDimension;
  /** The lifetime proxy totals the values add up to. */
  lifetime: Pick<
    ByValueAmount,
    'tokens_saved' | 'compression_savings_usd' | 'requests' | 'unpriced_tokens_saved'
  >;
  /** Lifetime savings per value, most tokens first. */
  values: ByValueAmount[];
  /** Per period (periods with savings only), per value. */
  series: Record<Period, ByPeriodEntry[]>;
  limits: { per_period: number; lifetime: number; other: string; unattributed: string };
}

const roundUsd = (usd: number) => Math.max(0, Math.round(usd * 1e10) / 1e10);

/** Checks `by` (query or flag); throws SVC_BAD_REQUEST (400) naming the allowed values. */
export function parseHistoryBy(value: unknown): HistoryDimension | undefined {
  if (value === undefined || value === '') return undefined;
  if (typeof value === 'string' && (HISTORY_DIMENSIONS as readonly string[]).includes(value))
    return value as HistoryDimension;
  throw new SvcError(
    'SVC_BAD_REQUEST',
    `by must be one of ${HISTORY_DIMENSIONS.join(', ')}; got ${JSON.stringify(value)}`,
    { details: { param: 'by', allowed: HISTORY_DIMENSIONS } },
  );
}

/** An amount's values of one dimension, with what the split does not cover as `unattributed`. */
function valuesOf(amount: SavingsAmount, by: HistoryDimension): ByValueAmount[] {
  const out: ByValueAmount[] = [];
  const rest = {
    tokens: amount.tokens_saved,
    usd: amount.compression_savings_usd,
    requests: amount.requests,
    unpriced: amount.unpriced_tokens_saved,
  };
  for (const [value, [tokens, usd, requests, unpriced]] of Object.entries(amount.by?.[by] ?? {})) {
    out.push({
      value,
      tokens_saved: tokens,
      compression_savings_usd: roundUsd(usd),
      requests,
      unpriced_tokens_saved: unpriced,
    });
    rest.tokens -= tokens;
    rest.usd -= usd;
    rest.requests -= requests;
    rest.unpriced -= unpriced;
  }
  if (rest.requests > 0 || rest.tokens > 0) {
    out.push({
      value: UNATTRIBUTED,
      tokens_saved: Math.max(0, rest.tokens),
      compression_savings_usd: roundUsd(rest.usd),
      requests: Math.max(0, rest.requests),
      unpriced_tokens_saved: Math.max(0, rest.unpriced),
    });
  }
  return out.sort((a, b) => b.tokens_saved - a.tokens_saved || a.value.localeCompare(b.value));
}

/** The `?by=` record from the savings file's content. */
export function buildHistoryBy(data: SavingsData, by: HistoryDimension, now: number): HistoryByRecord {
  const series = {} as Record<Period, ByPeriodEntry[]>;
  for (const period of PERIODS) {
    const oldest = periodsBack(period, now, ROLLUP_RETENTION[period] - 1);
    const starts = Object.keys(data.rollups[period])
      .map((key) => [Date.parse(key), key] as const)
      .filter(([start]) => start >= oldest)
      .sort((a, b) => a[0] - b[0]);
    series[period] = starts.flatMap(([start, key]) =>
      valuesOf(data.rollups[period][key]!, by).map((v) => ({
        timestamp: iso(start),
        period_end: iso(nextPeriodStart(period, start)),
        ...v,
      })),
    );
  }
  const { tokens_saved, compression_savings_usd, requests, unpriced_tokens_saved } = data.lifetime;
  return {
    schema_version: SCHEMA_VERSION,
    generated_at: iso(now),
    by,
    lifetime: { tokens_saved, compression_savings_usd, requests, unpriced_tokens_saved },
    values: valuesOf(data.lifetime, by),
    series,
    limits: {
      per_period: BY_MAX_VALUES,
      lifetime: BY_LIFETIME_MAX_VALUES,
      other: BY_OTHER,
      unattributed: UNATTRIBUTED,
    },
  };
}

const AMOUNT_COLUMNS = ['tokens_saved', 'compression_savings_usd', 'requests', 'unpriced_tokens_saved'];

/**
 * The body of a `?by=` export: the whole record as JSON, or CSV of one
 * series (`history`, the default series, gives the lifetime values). The
 * value column is named after the dimension (`project`, `model`, `client`).
 */
export function renderHistoryBy(
  record: HistoryByRecord,
  request: Pick<HistoryExport, 'format' | 'series'>,
  pretty = false,
): { contentType: string; body: string } {
  if (request.format === 'json') {
    const body = pretty ? `${JSON.stringify(record, null, 2)}\n` : JSON.stringify(record);
    return { contentType: 'application/json', body };
  }
  const rename = ({ value, ...rest }: ByValueAmount) => ({ [record.by]: value, ...rest });
  const body =
    request.series === 'history'
      ? stringify(record.values.map(rename), { header: true, columns: [record.by, ...AMOUNT_COLUMNS] })
      : stringify(record.series[request.series].map(rename), {
          header: true,
          columns: ['timestamp', 'period_end', record.by, ...AMOUNT_COLUMNS],
        });
  return { contentType: 'text/csv; charset=utf-8', body };
}
