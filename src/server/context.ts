import type { CcrStore } from '../ccr/store.js';
import type { Config } from '../config/options.js';
import type { ContentMemo } from '../engine/types.js';
import type { SvcEventBus } from '../events.js';
import type { Logger } from '../log.js';
import type { ToinStore } from '../toin/store.js';
import type { CompressFn } from './engine-call.js';
import type { ProxyPipeline } from './pipeline.js';
import type { UpstreamClient } from './upstream.js';

/**
 * Everything a route needs, built once per server instance. Later parts
 * (stats, cache, rate limit, budget, TOIN) add their own fields here.
 */
export interface ServerContext {
  config: Config;
  bus: SvcEventBus;
  ccr: CcrStore;
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
  /** The engine entry point (injectable for tests). */
  compress: CompressFn;
  /** Per-content memo shared by every engine call of this server (principle 4). */
  engineMemo: ContentMemo;
  /** The stages of a proxied request; later parts insert theirs by name. */
  pipeline: ProxyPipeline;
  /** Upstream calls (one undici Agent: keep-alive pools, timeouts). */
  upstream: UpstreamClient;
  /** What TOIN learned (opened by the TOIN plugin); its advice goes to every engine call. */
  toin?: ToinStore;
}
