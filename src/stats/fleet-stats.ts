import type { Logger } from '../log.js';
import type { SharedStore } from '../store/redis.js';
import type { LiveStats, LiveTotals } from './live-stats.js';
import { AggregatorRegistry, type Registry } from './prom.js';

/**
 * Metrics whose values already are the fleet's (the Redis cache's own
 * counters): summing every replica's copy would count them several times.
 */
const FLEET_NATIVE = new Set(['service_cache_hits_total', 'service_cache_misses_total']);
const SEP = '\t';

type Flat = Map<string, number>;
type Labels = Record<string, string | number>;
interface MetricValueJson {
  value: number;
  labels: Labels;
  metricName?: string;
}
/** A metric as `registry.getMetricsAsJSON()` gives it (its `type` is the text name at run time). */
interface MetricJson {
  name: string;
  help: string;
  type: string;
  aggregator: string;
  values: MetricValueJson[];
}

/** `{a: {b: 1}}` -> `l.a.b = 1` (numbers only; derived `savings_percent` left out). */
function flattenTotals(value: unknown, path: string, out: Flat): Flat {
  if (typeof value === 'number') {
    if (!path.endsWith('.savings_percent')) out.set(path, value);
  } else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) flattenTotals(v, `${path}.${k}`, out);
  }
  return out;
}

function labelsKey(labels: Labels): string {
  return JSON.stringify(Object.fromEntries(Object.entries(labels).sort(([a], [b]) => a.localeCompare(b))));
}

function flattenMetrics(metrics: MetricJson[], out: Flat): Flat {
  for (const m of metrics) {
    if ((m.type !== 'counter' && m.type !== 'histogram') || FLEET_NATIVE.has(m.name)) continue;
    for (const v of m.values) {
      const metricName = v.metricName ?? m.name;
      out.set(['m', m.name, metricName, labelsKey(v.labels)].join(SEP), v.value);
    }
  }
  return out;
}

/** Options of `createFleetStats`. */
export interface FleetStatsOptions {
  live: LiveStats;
  registry: Registry;
  logger: Logger;
  /** Counters are sent this long after a change (ms). Default 250. */
  flushDelayMs?: number;
}

/** The fleet's live counters and metrics, for `/stats` and `/metrics` with `--store`. */
export interface FleetStats {
  /** Schedules sending this replica's new counts (call on every finished request). */
  changed(): void;
  /** The fleet's totals: every replica's counts since the store was first used. */
  totals(): Promise<LiveTotals>;
  /** `/metrics` text with counters and histograms summed over the fleet. */
  metrics(): Promise<{ contentType: string; body: string }>;
  /** Sends what is left. */
  close(): Promise<void>;
}

/**
 * Keeps the fleet's counters in one Redis hash (`<prefix>fleet`): each
 * replica adds the difference between its counters now and what it sent
 * last (HINCRBYFLOAT in one MULTI), so counts are never lost or sent twice,
 * also across an outage (the difference just grows). Reads add this
 * replica's unsent difference, so a replica always sees its own requests.
 */
export function createFleetStats(store: SharedStore, options: FleetStatsOptions): FleetStats {
  const key = store.key('fleet');
  let sent: Flat = new Map();
  let timer: NodeJS.Timeout | undefined;
  let chain: Promise<void> = Promise.resolve();

  const snapshot = async (): Promise<Flat> => {
    const out = flattenTotals(options.live.totals(), 'l', new Map());
    return flattenMetrics((await options.registry.getMetricsAsJSON()) as unknown as MetricJson[], out);
  };
  const unsent = (now: Flat): Flat => {
    const d: Flat = new Map();
    for (const [k, v] of now) {
      const diff = v - (sent.get(k) ?? 0);
      if (diff !== 0) d.set(k, diff);
    }
    return d;
  };
  const push = async (): Promise<void> => {
    const now = await snapshot();
    const diff = unsent(now);
    if (diff.size === 0) return;
    const multi = store.redis.multi();
    for (const [k, v] of diff) multi.hincrbyfloat(key, k, v);
    multi.hset(key, mark, 1);
    const results = await multi.exec();
    if (!results || results.some(([err]) => err)) throw new Error('fleet counters not written');
    sent = now;
  };
  const flush = (): Promise<void> => {
    chain = chain.then(push).catch((err: unknown) => {
      store.noteFailure(err);
      // Kept (the difference grows); sent on the next change or on reconnection.
      if (store.healthy)
        options.logger.warn('stats: fleet counters not sent yet; will retry', { error: String(err) });
    });
    return chain;
  };
  const schedule = (delay = options.flushDelayMs ?? 250) => {
    if (timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      void flush();
    }, delay);
    timer.unref();
  };
  let lastStored: Record<string, string> = {};
  // A Redis that came back without its data (no persistence) lost what this replica sent: send it all again.
  const mark = `r:${store.replicaId}`;
  const unsubscribe = store.onReconnect(() => {
    chain = chain
      .then(async () => {
        if (sent.size > 0 && !(await store.redis.hexists(key, mark))) {
          options.logger.warn(
            "stats: the store lost the fleet counters; sending this replica's session again",
          );
          sent = new Map();
        }
      })
      .catch(() => undefined);
    void flush();
  });

  /** The fleet's flat counters plus this replica's unsent part. */
  const fleetFlat = async (): Promise<Flat> => {
    const now = await snapshot();
    const diff = unsent(now);
    let stored = lastStored;
    try {
      stored = await store.redis.hgetall(key);
      lastStored = stored;
    } catch {
      // Outage: the fleet as last read, plus what this replica counted since it last sent.
    }
    const out: Flat = new Map(Object.entries(stored).map(([k, v]) => [k, Number(v)]));
    for (const [k, v] of diff) out.set(k, (out.get(k) ?? 0) + v);
    return out;
  };

  return {
    changed() {
      schedule();
    },
    async totals() {
      const flat = await fleetFlat();
      const totals = options.live.totals();
      const setPath = (obj: Record<string, unknown>, parts: string[], value: number) => {
        const [head, ...rest] = parts;
        if (head === undefined) return;
        if (rest.length === 0) obj[head] = value;
        else {
          obj[head] = typeof obj[head] === 'object' && obj[head] !== null ? obj[head] : {};
          setPath(obj[head] as Record<string, unknown>, rest, value);
        }
      };
      // Start from zeros so that this replica's own session does not leak into a field the fleet lacks.
      const zeroed = JSON.parse(
        JSON.stringify(totals, (_k, v: unknown) => (typeof v === 'number' ? 0 : v)),
      ) as LiveTotals;
      for (const [k, v] of flat)
        if (k.startsWith('l.'))
          setPath(zeroed as unknown as Record<string, unknown>, k.slice(2).split('.'), v);
      const t = zeroed.tokens;
      t.savings_percent = t.input > 0 ? Math.round((t.saved / t.input) * 10_000) / 100 : 0;
      zeroed.cost.total_cost_usd = Math.round(zeroed.cost.total_cost_usd * 1e10) / 1e10;
      zeroed.cost.total_savings_usd = Math.round(zeroed.cost.total_savings_usd * 1e10) / 1e10;
      zeroed.cost.cache_aware_savings_usd = Math.round(zeroed.cost.cache_aware_savings_usd * 1e10) / 1e10;
      const p = zeroed.projected;
      p.savings_percent =
        p.tokens_input > 0 ? Math.round((p.tokens_saved / p.tokens_input) * 10_000) / 100 : 0;
      p.savings_usd = Math.round(p.savings_usd * 1e10) / 1e10;
      return zeroed;
    },
    async metrics() {
      const flat = await fleetFlat();
      const local = (await options.registry.getMetricsAsJSON()) as unknown as MetricJson[];
      const merged = local.map((m): MetricJson => {
        if ((m.type !== 'counter' && m.type !== 'histogram') || FLEET_NATIVE.has(m.name)) return m;
        const values: MetricValueJson[] = [];
        const seen = new Set<string>();
        const add = (metricName: string, labels: Labels, value: number) => {
          const id = [metricName, labelsKey(labels)].join(SEP);
          if (seen.has(id)) return;
          seen.add(id);
          values.push({ value, labels, ...(metricName !== m.name ? { metricName } : {}) });
        };
        for (const v of m.values) {
          const metricName = v.metricName ?? m.name;
          add(metricName, v.labels, flat.get(['m', m.name, metricName, labelsKey(v.labels)].join(SEP)) ?? 0);
        }
        for (const [k, value] of flat) {
          const [kind, name, metricName, labels] = k.split(SEP);
          if (kind === 'm' && name === m.name && metricName && labels)
            add(metricName, JSON.parse(labels) as Labels, value);
        }
        return { ...m, values };
      });
      const registry = AggregatorRegistry.aggregate([merged] as never);
      return { contentType: options.registry.contentType, body: await registry.metrics() };
    },
    async close() {
      if (timer) clearTimeout(timer);
      unsubscribe();
      await flush();
    },
  };
}
