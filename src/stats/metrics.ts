import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { RequestFinishedEvent } from '../events.js';
import { countsAsSaving, type RequestCost } from './cost.js';

/** Buckets of `service_compression_ratio` (tokens after / tokens before). */
export const RATIO_BUCKETS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1];
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
  const requests = new Counter({
    name: 'service_requests_total',
    help: 'Requests handled, by mode',
    labelNames: ['mode'] as const,
    registers,
  });
  const byModel = new Counter({
    name: 'service_model_requests_total',
    help: 'Requests by model (pricing-table key, or other)',
    labelNames: ['model'] as const,
    registers,
  });
  const failed = new Counter({
    name: 'service_requests_failed_total',
    help: 'Requests answered with status >= 400 (rate-limited excluded)',
    registers,
  });
  const limited = new Counter({
    name: 'service_requests_rate_limited_total',
    help: 'Requests refused by the rate limiter',
    registers,
  });
  const compressionFailed = new Counter({
    name: 'service_compression_failures_total',
    help: 'Compressions that threw (original forwarded)',
    registers,
  });
  const saved = new Counter({
    name: 'service_tokens_saved_total',
    help: 'Input tokens removed by compression',
    registers,
  });
  const input = new Counter({
    name: 'service_tokens_input_total',
    help: 'Input tokens clients sent (counted before compression)',
    registers,
  });
  const output = new Counter({
    name: 'service_tokens_output_total',
    help: 'Output tokens the upstream reported',
    registers,
  });
  const cost = new Counter({
    name: 'service_cost_usd_total',
    help: 'USD billed by upstreams (known models only)',
    registers,
  });
  const savingsUsd = new Counter({
    name: 'service_savings_usd_total',
    help: 'USD saved by compression (known models only)',
    registers,
  });
  const added = new Counter({
    name: 'service_tokens_added_total',
    help: 'Tokens svc added to forwarded requests (its svc_retrieve definition)',
    registers,
  });
  const rounds = new Counter({
    name: 'service_retrieval_rounds_total',
    help: 'Retrieval continuations svc sent upstream (answering svc_retrieve)',
    registers,
  });
  const roundTokens = new Counter({
    name: 'service_retrieval_tokens_total',
    help: 'Tokens of the retrieval continuations svc sent upstream (taken off the savings of their requests)',
    registers,
  });
  const cacheAware = new Gauge({
    name: 'service_cache_aware_savings_usd',
    help: 'Cache-aware USD saved since start: estimate without svc less billed cost (negative when svc cost more)',
    registers,
  });
  const projectedSaved = new Counter({
    name: 'service_projected_tokens_saved_total',
    help: 'Observe mode: tokens compression would have removed (not removed)',
    registers,
  });
  const projectedUsd = new Gauge({
    name: 'service_projected_savings_usd',
    help: 'Observe mode: cache-aware USD compression would have saved since start',
    registers,
  });
  const latencySum = new Counter({
    name: 'service_latency_ms_sum',
    help: 'Sum of request latencies in milliseconds',
    registers,
  });
  const ratio = new Histogram({
    name: 'service_compression_ratio',
    help: 'Compression ratio (tokens after / tokens before) of compressed requests',
    buckets: RATIO_BUCKETS,
    registers,
  });
  const latency = new Histogram({
    name: 'service_latency_seconds',
    help: 'Request latency, first byte in to last byte out',
    buckets: LATENCY_BUCKETS,
    registers,
  });
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
      requests.inc({ mode: event.mode });
      byModel.inc({ model: priced.modelKey ?? 'other' });
      if (event.rateLimited) limited.inc();
      else if (event.status >= 400) failed.inc();
      if (event.compressionFailed) compressionFailed.inc();
      if (event.cached) hitsFromEvents += 1;
      input.inc(event.tokensBefore);
      if (countsAsSaving(event)) saved.inc(event.tokensSaved);
      if (event.usage) output.inc(event.usage.output);
      if (priced.costUsd) cost.inc(priced.costUsd);
      if (priced.savingsUsd) savingsUsd.inc(priced.savingsUsd);
      if (event.tokensAdded) added.inc(event.tokensAdded);
      if (event.retrievalRounds?.length) rounds.inc(event.retrievalRounds.length);
      if (event.retrievalTokens) roundTokens.inc(event.retrievalTokens);
      if (event.cacheAwareSavingsUsd) cacheAware.inc(event.cacheAwareSavingsUsd);
      if (event.projected) {
        if (event.projected.tokensSaved > 0) projectedSaved.inc(event.projected.tokensSaved);
        if (event.projected.savingsUsd) projectedUsd.inc(event.projected.savingsUsd);
      }
      latencySum.inc(Math.max(0, event.latencyMs));
      latency.observe(Math.max(0, event.latencyMs) / 1000);
      if (
        (event.mode === 'optimize' || event.mode === 'compress') &&
        event.tokensBefore > 0 &&
        !event.cached
      ) {
        ratio.observe(event.tokensAfter / event.tokensBefore);
      }
    },
  };
}
