import type { RequestFinishedEvent } from '../events.js';
import { countsAsSaving, type RequestCost } from './cost.js';
import { Counter, Gauge, Histogram, Registry } from './prom.js';

/** Buckets of `service_compression_ratio` (tokens after / tokens before). */
export const RATIO_BUCKETS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1];
/** Observations a histogram holds back before they go in at once (bounds the memory they take). */
const PENDING_OBSERVATIONS = 256;
/** Buckets of `service_latency_seconds`. */
export const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/** Cache counters the response cache reports (`ctx.cacheStats`). */
export interface CacheCounts {
  entries: number;
  hits: number;
  misses: number;
}

export interface MetricsOptions {
  version: string;
  startedAt: number;
  now: () => number;
  /** The response cache's own counters, when a cache is running. */
  cacheStats?: () => CacheCounts | undefined;
  /** Bytes held by part (`service_memory_bytes{part}`), read at each scrape. */
  memory?: () => Record<string, number>;
}

/** The Prometheus registry of one server and the function that feeds it. */
export interface SvcMetrics {
  registry: Registry;
  observe(event: RequestFinishedEvent, cost: RequestCost): void;
}

/**
 * Builds a registry per server instance (two servers in one process never
 * share counters). Labels stay bounded: `mode` is the fixed set of request
 * modes and `model` is a pricing-table key or `other`.
 */
export function createMetrics(options: MetricsOptions): SvcMetrics {
  const registry = new Registry();
  const registers = [registry];
  // The request path only adds to these; prom-client reads them at each scrape (its `inc`
  // hashes the labels and validates the value on every call).
  const byMode = new Map<string, number>();
  const byModelKey = new Map<string, number>();
  const totals = {
    failed: 0,
    limited: 0,
    compressionFailed: 0,
    saved: 0,
    input: 0,
    output: 0,
    cost: 0,
    savingsUsd: 0,
    added: 0,
    rounds: 0,
    roundTokens: 0,
    cacheAware: 0,
    projectedSaved: 0,
    projectedUsd: 0,
    latencySum: 0,
  };
  type Total = keyof typeof totals;
  const counter = (name: string, help: string, total: Total) =>
    new Counter({
      name,
      help,
      registers,
      collect() {
        this.reset();
        this.inc(totals[total]);
      },
    });
  const labelled = (name: string, help: string, label: string, counts: Map<string, number>) =>
    new Counter({
      name,
      help,
      labelNames: [label],
      registers,
      collect() {
        this.reset();
        for (const [value, n] of counts) this.inc({ [label]: value }, n);
      },
    });
  const gauge = (name: string, help: string, total: Total) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        this.set(totals[total]);
      },
    });
  labelled('service_requests_total', 'Requests handled, by mode', 'mode', byMode);
  labelled(
    'service_model_requests_total',
    'Requests by model (pricing-table key, or other)',
    'model',
    byModelKey,
  );
  counter(
    'service_requests_failed_total',
    'Requests answered with status >= 400 (rate-limited excluded)',
    'failed',
  );
  counter('service_requests_rate_limited_total', 'Requests refused by the rate limiter', 'limited');
  counter(
    'service_compression_failures_total',
    'Compressions that threw (original forwarded)',
    'compressionFailed',
  );
  counter('service_tokens_saved_total', 'Input tokens removed by compression', 'saved');
  counter('service_tokens_input_total', 'Input tokens clients sent (counted before compression)', 'input');
  counter('service_tokens_output_total', 'Output tokens the upstream reported', 'output');
  counter('service_cost_usd_total', 'USD billed by upstreams (known models only)', 'cost');
  counter('service_savings_usd_total', 'USD saved by compression (known models only)', 'savingsUsd');
  counter(
    'service_tokens_added_total',
    'Tokens svc added to forwarded requests (its svc_retrieve definition)',
    'added',
  );
  counter(
    'service_retrieval_rounds_total',
    'Retrieval continuations svc sent upstream (answering svc_retrieve)',
    'rounds',
  );
  counter(
    'service_retrieval_tokens_total',
    'Tokens of the retrieval continuations svc sent upstream (taken off the savings of their requests)',
    'roundTokens',
  );
  gauge(
    'service_cache_aware_savings_usd',
    'Cache-aware USD saved since start: estimate without svc less billed cost (negative when svc cost more)',
    'cacheAware',
  );
  counter(
    'service_projected_tokens_saved_total',
    'Observe mode: tokens compression would have removed (not removed)',
    'projectedSaved',
  );
  gauge(
    'service_projected_savings_usd',
    'Observe mode: cache-aware USD compression would have saved since start',
    'projectedUsd',
  );
  counter('service_latency_ms_sum', 'Sum of request latencies in milliseconds', 'latencySum');
  // Observations wait in a list and go into their histogram in a batch: at each scrape, or when
  // the list is full (prom-client's `observe` validates and hashes labels on every call).
  const pendingRatios: number[] = [];
  const pendingLatencies: number[] = [];
  const flushInto = (histogram: Histogram<string>, values: number[]) => {
    for (const v of values) histogram.observe(v);
    values.length = 0;
  };
  const ratio: Histogram<string> = new Histogram({
    name: 'service_compression_ratio',
    help: 'Compression ratio (tokens after / tokens before) of compressed requests',
    buckets: RATIO_BUCKETS,
    registers,
    collect: () => flushInto(ratio, pendingRatios),
  });
  const latency: Histogram<string> = new Histogram({
    name: 'service_latency_seconds',
    help: 'Request latency, first byte in to last byte out',
    buckets: LATENCY_BUCKETS,
    registers,
    collect: () => flushInto(latency, pendingLatencies),
  });
  const observe = (histogram: Histogram<string>, values: number[], value: number) => {
    values.push(value);
    if (values.length >= PENDING_OBSERVATIONS) flushInto(histogram, values);
  };
  if (options.memory) {
    const memory = options.memory;
    new Gauge({
      name: 'service_memory_bytes',
      help: 'Memory held by the server: rss, heap_used, heap_total, external, and estimates of each bounded store',
      labelNames: ['part'] as const,
      registers,
      collect() {
        this.reset();
        for (const [part, bytes] of Object.entries(memory())) this.set({ part }, bytes);
      },
    });
  }
  let hitsFromEvents = 0;
  new Counter({
    name: 'service_cache_hits_total',
    help: 'Response-cache hits',
    registers,
    collect() {
      this.reset();
      this.inc(options.cacheStats?.()?.hits ?? hitsFromEvents);
    },
  });
  new Counter({
    name: 'service_cache_misses_total',
    help: 'Response-cache misses',
    registers,
    collect() {
      this.reset();
      this.inc(options.cacheStats?.()?.misses ?? 0);
    },
  });
  new Gauge({
    name: 'service_cache_entries',
    help: 'Entries in the response cache',
    registers,
    collect() {
      this.set(options.cacheStats?.()?.entries ?? 0);
    },
  });
  new Gauge({
    name: 'service_uptime_seconds',
    help: 'Seconds since the server started',
    registers,
    collect() {
      this.set((options.now() - options.startedAt) / 1000);
    },
  });
  new Gauge({ name: 'service_info', help: 'svc version', labelNames: ['version'] as const, registers }).set(
    { version: options.version },
    1,
  );

  return {
    registry,
    observe(event, priced) {
      const t = totals;
      byMode.set(event.mode, (byMode.get(event.mode) ?? 0) + 1);
      const model = priced.modelKey ?? 'other';
      byModelKey.set(model, (byModelKey.get(model) ?? 0) + 1);
      if (event.rateLimited) t.limited += 1;
      else if (event.status >= 400) t.failed += 1;
      if (event.compressionFailed) t.compressionFailed += 1;
      if (event.cached) hitsFromEvents += 1;
      t.input += event.tokensBefore;
      if (countsAsSaving(event)) t.saved += event.tokensSaved;
      if (event.usage) t.output += event.usage.output;
      if (priced.costUsd) t.cost += priced.costUsd;
      if (priced.savingsUsd) t.savingsUsd += priced.savingsUsd;
      if (event.tokensAdded) t.added += event.tokensAdded;
      if (event.retrievalRounds?.length) t.rounds += event.retrievalRounds.length;
      if (event.retrievalTokens) t.roundTokens += event.retrievalTokens;
      if (event.cacheAwareSavingsUsd) t.cacheAware += event.cacheAwareSavingsUsd;
      if (event.projected) {
        if (event.projected.tokensSaved > 0) t.projectedSaved += event.projected.tokensSaved;
        if (event.projected.savingsUsd) t.projectedUsd += event.projected.savingsUsd;
      }
      t.latencySum += Math.max(0, event.latencyMs);
      observe(latency, pendingLatencies, Math.max(0, event.latencyMs) / 1000);
      if (
        (event.mode === 'optimize' || event.mode === 'compress') &&
        event.tokensBefore > 0 &&
        !event.cached
      ) {
        observe(ratio, pendingRatios, event.tokensAfter / event.tokensBefore);
      }
    },
  };
}
