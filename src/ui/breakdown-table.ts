import type { Dimension } from '../stats/breakdown.js';
import { HISTORY_DIMENSIONS, type HistoryDimension } from '../stats/savings-data.js';
import type { StatsSnapshot } from '../stats/snapshot.js';
import { fitTable, hiddenNote } from './fit-table.js';
import { signedUsd, usd } from './stats-rows.js';

const int = (n: number) => Math.round(n).toLocaleString('en-US');

/** One value of a `svc stats --by` view (the running server's, or the savings file's lifetime savings). */
export interface BreakdownLine {
  value: string;
  requests: number;
  tokens_input: number | null;
  tokens_saved: number;
  cost_usd: number | null;
  savings_usd: number;
  unpriced: number;
  /** Cache-aware USD saved (signed); null when it was known for no request of the value. */
  cache_aware_usd: number | null;
}

/** What `svc stats --by` shows and returns with `--json`. */
export interface BreakdownView {
  by: Dimension;
  source: StatsSnapshot['source'];
  /** Where the figures come from. */
  note: string;
  rows: BreakdownLine[];
}

/**
 * The breakdown of a stats snapshot by one dimension: the server's `/stats`
 * `breakdown` (since it started), or, with no server answering, the lifetime
 * savings the file recorded per project, model or client (no cost, no key).
 */
export function breakdownView(snapshot: StatsSnapshot, by: Dimension): BreakdownView {
  if (snapshot.source === 'server') {
    const rows = Object.entries(snapshot.stats.breakdown?.[by] ?? {}).map(([value, r]) => ({
      value,
      requests: r.requests,
      tokens_input: r.tokens_input,
      tokens_saved: r.tokens_saved,
      cost_usd: r.cost_usd,
      savings_usd: r.savings_usd,
      unpriced: r.unpriced_requests,
      // an older server reports no cache-aware figure: unknown, not 0
      cache_aware_usd: (r.cache_aware_requests ?? 0) > 0 ? (r.cache_aware_savings_usd ?? 0) : null,
    }));
    return { by, source: 'server', note: `server ${snapshot.url}, since it started`, rows };
  }
  const split = (HISTORY_DIMENSIONS as readonly string[]).includes(by)
    ? snapshot.lifetime.by?.[by as HistoryDimension]
    : undefined;
  const rows = Object.entries(split ?? {})
    .map(([value, [tokens, savings, requests, unpriced]]) => ({
      value,
      requests,
      tokens_input: null,
      tokens_saved: tokens,
      cost_usd: null,
      savings_usd: savings,
      unpriced,
      cache_aware_usd: null,
    }))
    .sort((a, b) => b.tokens_saved - a.tokens_saved);
  const note =
    `no server at ${snapshot.url} (${snapshot.reason}): lifetime savings from ${snapshot.savings_path}` +
    (split ? '' : ` (the file keeps no split by ${by})`);
  return { by, source: 'file', note, rows };
}

/** A breakdown as a terminal table, fitted to the output width. */
export function breakdownTable(view: BreakdownView, width?: number): string {
  const server = view.source === 'server';
  const {
    text,
    hidden,
    width: w,
  } = fitTable(
    [
      { head: view.by, wrap: true, min: 12 },
      { head: server ? 'requests' : 'savings recorded', right: true },
      ...(server ? [{ head: 'tokens in', right: true, drop: 2 }] : []),
      { head: 'tokens saved', right: true },
      ...(server ? [{ head: 'cost', right: true, drop: 3 }] : []),
      { head: 'saved USD', right: true },
      { head: 'unpriced', right: true, drop: 1 },
      ...(server ? [{ head: 'cache-aware', right: true, drop: 4 }] : []),
    ],
    view.rows.map((r) => [
      r.value,
      int(r.requests),
      ...(server ? [int(r.tokens_input ?? 0)] : []),
      int(r.tokens_saved),
      ...(server ? [usd(r.cost_usd ?? 0)] : []),
      usd(r.savings_usd),
      int(r.unpriced),
      ...(server ? [r.cache_aware_usd === null ? 'unknown' : signedUsd(r.cache_aware_usd)] : []),
    ]),
    width === undefined ? {} : { width },
  );
  return `${view.note}\n${text}\n${hiddenNote(hidden, 'all columns: --json', w)}`;
}
