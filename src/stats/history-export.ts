import { stringify } from 'csv-stringify/sync';
import { SvcError } from '../errors.js';
import {
  EXPORT_FORMATS,
  type ExportFormat,
  type HistoryRecord,
  type RollupEntry,
  SERIES_NAMES,
  type SeriesName,
} from './history-record.js';
import type { Checkpoint } from './savings-data.js';

/** CSV columns of the `history` series. */
export const HISTORY_COLUMNS: readonly (keyof Checkpoint)[] = [
  'timestamp',
  'total_tokens_saved',
  'compression_savings_usd',
];

/** CSV columns of the `hourly`, `daily`, `weekly` and `monthly` series. */
export const ROLLUP_COLUMNS: readonly (keyof RollupEntry)[] = [
  'timestamp',
  'period_end',
  'tokens_saved',
  'compression_savings_usd',
  'requests',
  'unpriced_tokens_saved',
  'total_tokens_saved',
  'total_compression_savings_usd',
  'cli_tokens_saved',
  'cli_runs',
  'cache_aware_savings_usd',
];

/** A validated export request. */
export interface HistoryExport {
  format: ExportFormat;
  series: SeriesName;
}

function oneOf<T extends string>(name: string, value: unknown, allowed: readonly T[], fallback: T): T {
  if (value === undefined || value === '') return fallback;
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  throw new SvcError(
    'SVC_BAD_REQUEST',
    `${name} must be one of ${allowed.join(', ')}; got ${JSON.stringify(value)}`,
    {
      details: { param: name, allowed },
    },
  );
}

/** Checks `format` and `series` (query or flags); throws SVC_BAD_REQUEST (400) naming the allowed values. */
export function parseHistoryExport(input: { format?: unknown; series?: unknown }): HistoryExport {
  return {
    format: oneOf('format', input.format, EXPORT_FORMATS, 'json'),
    series: oneOf('series', input.series, SERIES_NAMES, 'history'),
  };
}

/** The rows and columns of one series. */
export function seriesRows(
  record: HistoryRecord,
  series: SeriesName,
): { columns: readonly string[]; rows: readonly object[] } {
  if (series === 'history') return { columns: HISTORY_COLUMNS, rows: record.history };
  return { columns: ROLLUP_COLUMNS, rows: record.series[series] };
}

/** CSV text of one series, with a header row even when it is empty. */
export function historyCsv(record: HistoryRecord, series: SeriesName): string {
  const { columns, rows } = seriesRows(record, series);
  return stringify([...rows], { header: true, columns: [...columns] });
}

/**
 * The body of a history export: the whole record as JSON, or one series as
 * CSV. Shared by `GET /stats-history` and `svc history`.
 */
export function renderHistory(
  record: HistoryRecord,
  request: HistoryExport,
  pretty = false,
): { contentType: string; body: string } {
  if (request.format === 'csv') {
    return { contentType: 'text/csv; charset=utf-8', body: historyCsv(record, request.series) };
  }
  const body = pretty ? `${JSON.stringify(record, null, 2)}\n` : JSON.stringify(record);
  return { contentType: 'application/json', body };
}
