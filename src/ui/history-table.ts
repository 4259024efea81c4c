import type { HistoryRecord, SeriesName } from '../stats/history-record.js';
import { type FitColumn, fitTable, hiddenNote } from './fit-table.js';
import { signedUsd, usd } from './stats-rows.js';

const int = (n: number) => Math.round(n).toLocaleString('en-US');

/**
 * A period start as a reader wants it: `2026-11-24` for a midnight,
 * `2026-11-24 13:00` otherwise (the exact ISO stamps are in --json / csv).
 */
export function shortTimestamp(iso: string): string {
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})(:\d{2}(?:\.\d+)?)?Z$/.exec(iso);
  if (!m) return iso;
  if (m[2] === '00:00' && (!m[3] || /^:00(\.0+)?$/.test(m[3]))) return m[1] ?? iso;
  return `${m[1]} ${m[2]}${m[3] && !/^:00(\.0+)?$/.test(m[3]) ? m[3].slice(0, 3) : ''}`;
}

const FULL = 'all columns: --format csv or --json';

/**
 * One series of the history record as a terminal table (`svc history --format table`),
 * fitted to the output width (80 columns in a pipe): running totals go first when it is narrow.
 */
export function historyTable(record: HistoryRecord, series: SeriesName, width?: number): string {
  const opts = width === undefined ? {} : { width };
  if (series === 'history') {
    const {
      text,
      hidden,
      width: w,
    } = fitTable(
      [
        { head: 'time (UTC)' },
        { head: 'total tokens saved', right: true },
        { head: 'total saved USD', right: true },
      ],
      record.history.map((c) => [
        shortTimestamp(c.timestamp),
        int(c.total_tokens_saved),
        usd(c.compression_savings_usd),
      ]),
      opts,
    );
    return `${text}\n${hiddenNote(hidden, FULL, w)}${record.history.length} checkpoints\n`;
  }
  const columns: FitColumn[] = [
    { head: 'period start (UTC)' },
    { head: 'tokens saved', right: true },
    { head: 'saved USD', right: true },
    { head: 'requests', right: true },
    { head: 'cache-aware USD', right: true, drop: 3 },
    { head: 'total tokens saved', right: true, drop: 2 },
    { head: 'total saved USD', right: true, drop: 1 },
  ];
  const rows = record.series[series].map((e) => [
    shortTimestamp(e.timestamp),
    int(e.tokens_saved),
    usd(e.compression_savings_usd),
    int(e.requests),
    signedUsd(e.cache_aware_savings_usd ?? 0),
    int(e.total_tokens_saved),
    usd(e.total_compression_savings_usd),
  ]);
  const { text, hidden, width: w } = fitTable(columns, rows, opts);
  return `${text}\n${hiddenNote(hidden, FULL, w)}${record.series[series].length} ${series} periods; lifetime ${int(record.lifetime.tokens_saved)} tokens, ${usd(record.lifetime.compression_savings_usd)}\ncache-aware: ${signedUsd(record.lifetime.cache_aware_savings_usd ?? 0)} (estimate without svc less the bill)${cliNote(record.lifetime)}\n`;
}

/** Offline `svc compress` savings, shown apart: tokens only, never USD. */
function cliNote(lifetime: { cli_tokens_saved?: number; cli_runs?: number }): string {
  const tokens = lifetime.cli_tokens_saved ?? 0;
  return tokens > 0
    ? `\nsvc compress (cli, no USD): ${int(tokens)} tokens in ${int(lifetime.cli_runs ?? 0)} runs`
    : '';
}
