import type { RequestFinishedEvent } from '../events.js';
import { countsAsSaving, type RequestCost } from './cost.js';
import { normalizeModel } from './pricing.js';
import { Counter, Gauge, type Registry } from './prom.js';

/*
 * Attribution (issue 18, item 7): requests, tokens, cost and savings by
 * project, model, client and API-key hash. `/stats` shows `breakdown`,
 * `/metrics` the `service_breakdown_*` counters (and the signed
 * `service_breakdown_cache_aware_savings_usd` gauge). Every dimension is bounded:
 * values past the cap are counted under `other`, so each breakdown still
 * adds up to the totals.
 */

/** The dimensions a request is attributed by. */
export const DIMENSIONS = ['project', 'model', 'client', 'key'] as const;
export type Dimension = (typeof DIMENSIONS)[number];

/** Distinct values per dimension kept by `/stats` `breakdown`; later ones are counted under `other`. */
export const BREAKDOWN_MAX_VALUES = 100;
/** Distinct label values per dimension in `/metrics` (the first seen keep their label); later ones go to `other`. */
export const METRICS_MAX_VALUES = 20;
/** The value that collects everything past a cap. */
export const OTHER = 'other';
/** Attributions whose rows `Breakdown.apply` keeps at hand. */
const ROWS_OF_MAX = 1000;

/** One value's counters (the same denominators as the `/stats` totals). */
export interface BreakdownRow {
  requests: number;
  /** Tokens of the whole requests as clients sent them (`tokens.input`). */
  tokens_input: number;
  /** Tokens of the whole requests as forwarded (`tokens.sent`). */
  tokens_sent: number;
  /** Tokens saved (answered, non-cached requests: `tokens.saved`). */
  tokens_saved: number;
  /** USD billed (known models: `cost.total_cost_usd`). */
  cost_usd: number;
  /** USD saved (known models: `cost.total_savings_usd`). */
  savings_usd: number;
  /** Requests whose cost or savings are unknown (`cost.unpriced_requests`). */
  unpriced_requests: number;
  /**
   * Cache-aware USD saved: estimate without svc (prompt cache modelled) less
   * the bill, negative when svc cost more (`cost.cache_aware_savings_usd`).
   */
  cache_aware_savings_usd: number;
  /** Requests the cache-aware saving was known for (`cost.cache_aware_requests`); 0 means unknown, not zero. */
  cache_aware_requests: number;
}

/** `/stats` `breakdown`: per dimension, value -> counters, most requests first. */
export type BreakdownRecord = Record<Dimension, Record<string, BreakdownRow>> & {
  limits: { max_values: number; other: string };
};

/** The value of each dimension for one request. */
export type Attribution = Record<Dimension, string>;

const roundUsd = (n: number) => Math.round(n * 1e10) / 1e10;

/** Models as attributed, by the name clients sent (bounded: names come from clients). */
const attributed = new Map<string, string>();
const ATTRIBUTED_MAX = 1000;

/** A model as attributed: the client's name, normalized as pricing normalizes it (`unknown` when none was sent). */
export function attributedModel(model: string | undefined): string {
  if (!model) return 'unknown';
  let name = attributed.get(model);
  if (name === undefined) {
    name = normalizeModel(model).slice(0, 100) || 'unknown';
    if (attributed.size >= ATTRIBUTED_MAX) attributed.clear();
    attributed.set(model, name);
  }
  return name;
}

/** The attribution of a finished request (`default` project, `other` client, `none` key when absent). */
export function attributionOf(event: RequestFinishedEvent): Attribution {
  return {
    project: event.project ?? 'default',
    model: attributedModel(event.model),
    client: event.client ?? 'other',
    key: event.keyHash ?? 'none',
  };
}

function zeroRow(): BreakdownRow {
  return {
    requests: 0,
    tokens_input: 0,
    tokens_sent: 0,
    tokens_saved: 0,
    cost_usd: 0,
    savings_usd: 0,
    unpriced_requests: 0,
    cache_aware_savings_usd: 0,
    cache_aware_requests: 0,
  };
}

/** Adds one priced request into a row, with the same rules as the `/stats` totals (`LiveStats`). */
function addTo(row: BreakdownRow, event: RequestFinishedEvent, cost: RequestCost): void {
  const saving = countsAsSaving(event);
  row.requests += 1;
  row.tokens_input += event.tokensBefore;
  row.tokens_sent += event.tokensAfter;
  if (saving) row.tokens_saved += event.tokensSaved;
  if (cost.costUsd !== undefined) row.cost_usd = roundUsd(row.cost_usd + cost.costUsd);
  if (cost.savingsUsd !== undefined) row.savings_usd = roundUsd(row.savings_usd + cost.savingsUsd);
  if (cost.costUsd === undefined || (saving && cost.savingsUsd === undefined)) row.unpriced_requests += 1;
  if (event.cacheAwareSavingsUsd !== undefined) {
    row.cache_aware_savings_usd = roundUsd(row.cache_aware_savings_usd + event.cacheAwareSavingsUsd);
    row.cache_aware_requests += 1;
  }
}

/** Value -> row, at most `max` values besides `other`. */
class BoundedRows {
  readonly rows = new Map<string, BreakdownRow>();
  private named = 0;
  constructor(private readonly max: number) {}

  /** The row of `value`, or `other`'s once `max` values are taken. */
  rowOf(value: string): { label: string; row: BreakdownRow } {
    let label = value;
    if (!this.rows.has(value)) {
      if (value !== OTHER && this.named >= this.max) label = OTHER;
      else if (value !== OTHER) this.named += 1;
    }
    let row = this.rows.get(label);
    if (!row) {
      row = zeroRow();
      this.rows.set(label, row);
    }
    return { label, row };
  }
}

/** The live breakdown of one server (since it started), for `/stats` and `/metrics`. */
export class Breakdown {
  private readonly live = new Map<Dimension, BoundedRows>();
  private readonly labelled = new Map<Dimension, BoundedRows>();
  /** The rows of each attribution seen (project, model, client and key), as `apply` counts into them. */
  private readonly rowsOf = new Map<string, BreakdownRow[]>();

  constructor(
    private readonly maxValues = BREAKDOWN_MAX_VALUES,
    private readonly metricsMaxValues = METRICS_MAX_VALUES,
  ) {
    for (const d of DIMENSIONS) {
      this.live.set(d, new BoundedRows(this.maxValues));
      this.labelled.set(d, new BoundedRows(this.metricsMaxValues));
    }
  }

  /**
   * Counts one finished, priced request under each dimension. The rows an
   * attribution counts into never change once found (a value keeps its row,
   * or `other`'s), so they are looked up once per attribution.
   */
  apply(event: RequestFinishedEvent, cost: RequestCost): void {
    const a = attributionOf(event);
    const key = `${a.project}\n${a.model}\n${a.client}\n${a.key}`;
    let rows = this.rowsOf.get(key);
    if (!rows) {
      rows = [];
      for (const d of DIMENSIONS)
        rows.push(this.live.get(d)!.rowOf(a[d]).row, this.labelled.get(d)!.rowOf(a[d]).row);
      // bounded: attributions come from clients
      if (this.rowsOf.size >= ROWS_OF_MAX) this.rowsOf.clear();
      this.rowsOf.set(key, rows);
    }
    for (const row of rows) addTo(row, event, cost);
  }

  /** `/stats` `breakdown`: a copy, each dimension's values by requests (most first). */
  record(): BreakdownRecord {
    const out = { limits: { max_values: this.maxValues, other: OTHER } } as BreakdownRecord;
    for (const d of DIMENSIONS) {
      const entries = [...this.live.get(d)!.rows].sort((a, b) => b[1].requests - a[1].requests);
      out[d] = Object.fromEntries(entries.map(([value, row]) => [value, { ...row }]));
    }
    return out;
  }

  /** The `/metrics` rows: per dimension, at most `metricsMaxValues` labels plus `other`. */
  metricRows(): [Dimension, string, BreakdownRow][] {
    const out: [Dimension, string, BreakdownRow][] = [];
    for (const d of DIMENSIONS)
      for (const [value, row] of this.labelled.get(d)!.rows) out.push([d, value, row]);
    return out;
  }
}

/**
 * Registers the `service_breakdown_*` counters (labels `dimension` and
 * `value`) on a registry, read from the breakdown at each scrape. A value
 * keeps its label once it has one (counters stay monotonic); past
 * `METRICS_MAX_VALUES` per dimension new values are counted under `other`.
 */
export function registerBreakdownMetrics(registry: Registry, breakdown: Breakdown): void {
  const fields: [string, string, keyof BreakdownRow][] = [
    ['service_breakdown_requests_total', 'Requests by attribution dimension and value', 'requests'],
    [
      'service_breakdown_tokens_input_total',
      'Input tokens clients sent, by dimension and value',
      'tokens_input',
    ],
    [
      'service_breakdown_tokens_saved_total',
      'Input tokens removed by compression, by dimension and value',
      'tokens_saved',
    ],
    ['service_breakdown_cost_usd_total', 'USD billed (known models), by dimension and value', 'cost_usd'],
    [
      'service_breakdown_savings_usd_total',
      'USD saved (known models), by dimension and value',
      'savings_usd',
    ],
  ];
  for (const [name, help, field] of fields) {
    new Counter({
      name,
      help,
      labelNames: ['dimension', 'value'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const [dimension, value, row] of breakdown.metricRows())
          if (row[field] > 0) this.inc({ dimension, value }, row[field]);
      },
    });
  }
  // Signed (negative when svc cost more), so a gauge like `service_cache_aware_savings_usd`.
  new Gauge({
    name: 'service_breakdown_cache_aware_savings_usd',
    help: 'Cache-aware USD saved (estimate without svc less billed; negative when svc cost more), by dimension and value',
    labelNames: ['dimension', 'value'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [dimension, value, row] of breakdown.metricRows())
        if (row.cache_aware_requests > 0) this.set({ dimension, value }, row.cache_aware_savings_usd);
    },
  });
}
