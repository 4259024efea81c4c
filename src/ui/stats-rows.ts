import type { StatsSnapshot } from '../stats/snapshot.js';

/** One line of the stats view: a label and its `name value` pairs. */
export interface StatsRow {
  label: string;
  items: Array<[name: string, value: string]>;
  /** Draw attention (a budget exceeded, an unreadable file). */
  alert?: boolean;
}

/** What the live view and the plain snapshot both print. */
export interface StatsLines {
  title: string;
  /** A line under the title: where the figures come from. */
  note: string;
  rows: StatsRow[];
}

const int = (n: number) => Math.round(n).toLocaleString('en-US');
/** USD with enough decimals to show small amounts (a cent has two, a single request often needs four). */
export const usd = (n: number) => `$${n >= 100 ? n.toFixed(2) : n >= 1 ? n.toFixed(3) : n.toFixed(4)}`;

/** Signed USD: a negative saving is shown with its minus sign (`-$0.0031`). */
export const signedUsd = (n: number) => (n < 0 ? `-${usd(-n)}` : usd(n));

type Period = { limit?: number | null; spend?: number; exceeded?: boolean };

function budgetRow(budget: Record<string, unknown> | undefined): StatsRow {
  if (budget?.enabled !== true) return { label: 'Budget', items: [['', 'no limit set']] };
  const items: StatsRow['items'] = [];
  let alert = false;
  for (const name of ['hourly', 'daily', 'monthly']) {
    const p = budget[name] as Period | undefined;
    if (!p || typeof p !== 'object' || p.limit === null || p.limit === undefined) continue;
    const spend = p.spend ?? 0;
    const pct = p.limit > 0 ? ` (${Math.round((spend / p.limit) * 100)}%)` : '';
    items.push([name, `${usd(spend)} of ${usd(p.limit)}${pct}${p.exceeded ? ' EXCEEDED' : ''}`]);
    alert ||= p.exceeded === true;
  }
  return { label: 'Budget', items: items.length > 0 ? items : [['', 'enabled']], alert };
}

/** Turns a snapshot into the lines of `svc stats`. */
export function statsLines(snapshot: StatsSnapshot): StatsLines {
  if (snapshot.source === 'file') {
    const l = snapshot.lifetime;
    const state =
      snapshot.file_state === 'missing'
        ? 'nothing recorded yet'
        : snapshot.file_state === 'malformed'
          ? 'the file is malformed'
          : `${int(l.requests)} recorded savings`;
    return {
      title: `svc stats: no server answering at ${snapshot.url} (${snapshot.reason})`,
      note: `Showing lifetime totals from the savings file ${snapshot.savings_path}`,
      rows: [
        {
          label: 'Lifetime',
          items: [
            ['tokens saved', int(l.tokens_saved)],
            ['saved', usd(l.compression_savings_usd)],
            ['', state],
          ],
          alert: snapshot.file_state === 'malformed',
        },
      ],
    };
  }
  const s = snapshot.stats;
  const unpriced = s.cost.unpriced_requests ?? 0;
  return {
    title: `svc stats: ${snapshot.url}`,
    note: `Live since ${s.started_at ?? 'start'}; updated ${snapshot.fetched_at}`,
    rows: [
      {
        label: 'Requests',
        items: [
          ['total', int(s.requests.total)],
          ['cached', int(s.requests.cached)],
          ['rate-limited', int(s.requests.rate_limited)],
          ['failed', int(s.requests.failed)],
        ],
      },
      {
        // Denominator: whole requests (system, tools, messages) as the clients sent them (docs/stats.md).
        label: 'Tokens',
        items: [
          ['in (whole requests)', int(s.tokens.input)],
          ['saved', `${int(s.tokens.saved)} (${s.tokens.savings_percent.toFixed(1)}% of in)`],
          ['sent', int(s.tokens.sent ?? 0)],
          ...((s.tokens.retrieval ?? 0) > 0
            ? ([['of which retrieval rounds', int(s.tokens.retrieval)]] as StatsRow['items'])
            : []),
          ['out', int(s.tokens.output)],
        ],
      },
      {
        label: 'Cost',
        items: [
          ['billed', usd(s.cost.total_cost_usd)],
          ['saved x input price', usd(s.cost.total_savings_usd)],
          ...(s.cost.cache_aware_requests !== undefined
            ? ([['cache-aware', signedUsd(s.cost.cache_aware_savings_usd)]] as StatsRow['items'])
            : []),
          ...(unpriced > 0 ? ([['unpriced requests', int(unpriced)]] as StatsRow['items']) : []),
        ],
      },
      ...((s.projected?.requests ?? 0) > 0
        ? [
            {
              label: 'Projected',
              items: [
                ['observed requests', int(s.projected.requests)],
                [
                  'would save',
                  `${int(s.projected.tokens_saved)} tokens (${s.projected.savings_percent.toFixed(1)}% of ${int(s.projected.tokens_input)} in)`,
                ],
                ['cache-aware', signedUsd(s.projected.savings_usd)],
                ['', '(--observe: not saved, nothing was changed)'],
              ],
            } as StatsRow,
          ]
        : []),
      {
        label: 'Cache',
        items: [
          ['entries', int(s.cache.entries)],
          ['hits', int(s.cache.total_hits)],
          ...(s.cache.enabled === false ? ([['', 'disabled']] as StatsRow['items']) : []),
        ],
      },
      budgetRow(s.budget),
      {
        label: 'Lifetime',
        items: [
          ['tokens saved', int(s.persistent_savings.lifetime.tokens_saved)],
          ['saved', usd(s.persistent_savings.lifetime.compression_savings_usd)],
          ['cache-aware', signedUsd(s.persistent_savings.lifetime.cache_aware_savings_usd ?? 0)],
          ...((s.persistent_savings.lifetime.cli_tokens_saved ?? 0) > 0
            ? ([
                [
                  'svc compress tokens (cli, no USD)',
                  int(s.persistent_savings.lifetime.cli_tokens_saved ?? 0),
                ],
              ] as StatsRow['items'])
            : []),
        ],
      },
    ],
  };
}

/** The plain-text snapshot printed when stdout is not a terminal. */
export function formatStatsText(snapshot: StatsSnapshot): string {
  const lines = statsLines(snapshot);
  const width = Math.max(...lines.rows.map((r) => r.label.length));
  const rows = lines.rows.map(
    (r) =>
      `${r.label.padEnd(width)}  ${r.items.map(([name, value]) => (name ? `${name} ${value}` : value)).join('  ')}`,
  );
  return [lines.title, lines.note, '', ...rows].join('\n');
}
