import type { CcrStore } from '../ccr/store.js';
import type { CompressFn, Compression } from '../compression.js';
import type { Config } from '../config/options.js';
import type { ContentMemo } from '../engine/types.js';
import type { SvcEventBus } from '../events.js';
import type { Guards } from '../guards/index.js';
import type { PrefixParser } from '../json/prefix-parse.js';
import type { Logger } from '../log.js';
import type { FleetStats } from '../stats/fleet-stats.js';
import type { LiveStats } from '../stats/live-stats.js';
import type { CacheCounts } from '../stats/metrics.js';
import type { PricingTable } from '../stats/pricing.js';
import type { SavingsStore } from '../stats/redis-savings.js';
import type { BudgetStatus } from '../stats/stats-record.js';
import type { SharedStore } from '../store/redis.js';
import type { ToinStore } from '../toin/store.js';
import type { ProxyPipeline } from './proxy/pipeline.js';
import type { UpstreamClient } from './proxy/upstream.js';

/**
 * Everything a route needs, built once per server instance. Later parts
 * (stats, cache, rate limit, budget, TOIN) add their own fields here.
 */
export interface ServerContext {
  config: Config;
  bus: SvcEventBus;
  ccr: CcrStore;
  /** The shared store (`--store redis://...`); undefined: state stays in memory and files. */
  store?: SharedStore;
  logger: Logger;
  /** Milliseconds since the epoch; injectable for tests. */
  now: () => number;
  /** svc version, from package.json. */
  version: string;
  /** Start-up time (ms since epoch). */
  startedAt: number;
  /**
   * Hooks run on shutdown after the server stopped accepting (flush files,
   * close stores). Registered by the parts that need them.
   */
  onClose: Array<() => Promise<void> | void>;
  /** Pricing table (shipped + `SERVICE_PRICING_PATH`); set by the stats plugin. */
  pricing?: PricingTable;
  /** Live session counters behind `/stats` and `/health`; set by the stats plugin. */
  liveStats?: LiveStats;
  /** The durable savings file; set by the stats plugin. */
  savings?: SavingsStore;
  /** The fleet's counters and metrics (`--store`); set by the stats plugin. */
  fleet?: FleetStats;
  /** Budget block of `/stats`; set by the budget guard. */
  budgetStatus?: () => BudgetStatus;
  /** Response-cache counters for `/stats` and `/metrics`; set by the response cache. */
  cacheStats?: () => CacheCounts | undefined;
  /** Response cache, rate limiter and budget; set by the guards part. */
  guards?: Guards;
  /** The engine entry point (injectable for tests). */
  compress: CompressFn;
  /** Per-content memo shared by every engine call of this server (principle 4). */
  engineMemo: ContentMemo;
  /** Parses request bodies, reusing the parse of the earlier turn of a conversation (principle 4). */
  bodies: PrefixParser;
  /** The stages of a proxied request (`PROXY_STAGES`, in order). */
  pipeline: ProxyPipeline;
  /** Upstream calls (one undici Agent: keep-alive pools, timeouts). */
  upstream: UpstreamClient;
  /** Execution provider of the ML compressor, when `--mlcompress` loaded a model. */
  mlProvider?: string;
  /** What TOIN learned (opened by the TOIN plugin); its advice goes to every engine call. */
  toin?: ToinStore;
}

/** The engine call as this server makes it: its config, engine, memo, CCR store and TOIN (see `compressAndStore`). */
export function compressionOf(ctx: ServerContext): Compression {
  const toin = ctx.toin;
  return {
    config: ctx.config,
    compress: ctx.compress,
    ccr: ctx.ccr,
    memo: ctx.engineMemo,
    toin: toin ? () => toin.advice() : undefined,
    observed: (observations) => ctx.bus.emit('toin.observed', { time: new Date(ctx.now()), observations }),
  };
}
