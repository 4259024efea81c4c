import type { AddressInfo } from 'node:net';
import polka from 'polka';
import { createMemoryCcrStore } from '../ccr/memory-store.js';
import { createRedisCcrStore } from '../ccr/redis-store.js';
import { createSpillFile, INDEX_ENTRY_BYTES } from '../ccr/spill-file.js';
import type { CcrStore } from '../ccr/store.js';
import { type CompressFn, createEngineMemo, lazyEngine } from '../compression.js';
import type { Config } from '../config/options.js';
import { limitEngineMemos, memoShares } from '../engine/memo-budget.js';
import { setTokenMemoLimit } from '../engine/tokens.js';
import { createEventBus } from '../events.js';
import { DEFAULT_FORMAT } from '../formats/index.js';
import { PROXY_KEEPS, PrefixParser } from '../json/prefix-parse.js';
import { createLogger, type Logger } from '../log.js';
import { loadMlCompressor, withMlPass } from '../ml/index.js';
import { connectSharedStore } from '../store/redis.js';
import { VERSION } from '../version.js';
import { withProjectPrefix } from './attribution.js';
import { withCanonicalPaths } from './canonical-path.js';
import type { RoutePlugin, ServerContext } from './context.js';
import { withExactPosts } from './exact-posts.js';

export type { RoutePlugin } from './context.js';

import { guardsPlugin } from './guards/plugin.js';
import { collectWhenIdle, paceFullCollections, scavengeWhenIdle } from './idle-gc.js';
import { LargeBodyPool, workerScript } from './large-body/pool.js';
import { MMAP_THRESHOLD, TRIM_THRESHOLD, tuneMalloc } from './malloc.js';
import { requestLogRoutes } from './observers/request-log.js';
import { telemetryRoutes } from './observers/telemetry.js';
import { ProxyPipeline } from './proxy/pipeline.js';
import { handleProxy, proxyRoutes } from './proxy/route.js';
import { PROXY_STAGES } from './proxy/stage-list.js';
import { createUpstreamClient } from './proxy/upstream.js';
import { sendError } from './respond.js';
import { compressRoutes } from './routes/compress.js';
import { dashboardRoutes } from './routes/dashboard.js';
import { healthRoutes } from './routes/health.js';
import { retrieveRoutes } from './routes/retrieve.js';
import { statsRoutes } from './routes/stats.js';
import { toinPlugin } from './routes/toin.js';

/** Paths under /v1 that svc answers itself: other methods on them are 404, not forwarded. */
const OWN_V1_PATHS = new Set(['/v1/compress', '/v1/retrieve', '/v1/toin']);

/** svc's own /v1 endpoints: a request for one of them never goes upstream, whatever its method. */
function isOwnV1Path(path: string): boolean {
  return OWN_V1_PATHS.has(path) || path.startsWith('/v1/retrieve/');
}

/** The route plugins, in registration order. Each part adds one line here. */
const PLUGINS: RoutePlugin[] = [
  healthRoutes,
  statsRoutes, // sets ctx.pricing, with which every event is priced before it is emitted
  guardsPlugin,
  compressRoutes,
  proxyRoutes,
  requestLogRoutes,
  telemetryRoutes,
  dashboardRoutes,
  toinPlugin,
  retrieveRoutes,
];

/** What `createSvcServer` needs; everything but `config` has a default. */
export interface SvcServerOptions {
  config: Config;
  logger?: Logger;
  /** Clock for tests. */
  now?: () => number;
  ccr?: CcrStore;
  /** The engine; default `compressMessages`. Tests inject a deterministic fake. */
  compress?: CompressFn;
}

/** A built server: its context, and how to start and stop it. */
export interface SvcServer {
  ctx: ServerContext;
  /** Starts listening; resolves with the base URL (`http://127.0.0.1:PORT`). */
  listen(): Promise<string>;
  /** Stops accepting, waits for in-flight requests (bounded), runs close hooks. */
  close(graceMs?: number): Promise<void>;
}

/** Fixes glibc's malloc thresholds for the server (`tuneMalloc`), and logs what it did. */
function fixMallocThresholds(ctx: ServerContext): void {
  const malloc = tuneMalloc();
  if (malloc === 'set')
    ctx.logger.debug('malloc: thresholds set', {
      mmap_threshold: MMAP_THRESHOLD,
      trim_threshold: TRIM_THRESHOLD,
    });
  else
    ctx.logger.debug('malloc: thresholds left as they are', {
      why: malloc === 'environment' ? 'set in the environment' : 'no glibc malloc controls (koffi, glibc)',
    });
}

/** Builds the polka app and its context. */
export async function createSvcServer(options: SvcServerOptions): Promise<SvcServer> {
  const { config } = options;
  const now = options.now ?? Date.now;
  const logger = options.logger ?? createLogger({ level: config.logLevel });
  // --store: state every replica may need lives in Redis; unreachable at start -> SVC_STORE_UNAVAILABLE.
  const store = config.store
    ? await connectSharedStore({ url: config.store, prefix: config.storePrefix, logger })
    : undefined;
  // --memo-max-bytes, shared by the memos of the process (src/engine/memo-budget.ts)
  const shares = memoShares(config.memoMaxBytes);
  setTokenMemoLimit(shares.tokenCountChars);
  limitEngineMemos(shares);
  const ctx: ServerContext = {
    config,
    bus: createEventBus(),
    ccr:
      options.ccr ??
      (store
        ? createRedisCcrStore(store, { ttlSeconds: config.ccrTtl })
        : createMemoryCcrStore({
            ttlMs: config.ccrTtl * 1000,
            maxSize: config.ccrMemoryMaxBytes,
            // past --ccr-memory-max-bytes, originals go to a file of this process in SERVICE_CCR_PATH,
            // up to SERVICE_CCR_MAX_BYTES, its index within a quarter of the memory bound
            spill: () =>
              createSpillFile({
                dir: config.ccrPath,
                maxBytes: config.ccrMaxBytes,
                maxEntries: Math.floor(config.ccrMemoryMaxBytes / 4 / INDEX_ENTRY_BYTES),
                ttlMs: config.ccrTtl * 1000,
              }),
            logger,
          })),
    ...(store ? { store } : {}),
    logger,
    now,
    version: VERSION,
    startedAt: now(),
    onClose: [],
    inFlight: new Set(),
    compress: options.compress ?? lazyEngine.compress,
    engineMemo: createEngineMemo(shares.engineResults),
    bodies: new PrefixParser(shares.bodyParses, PROXY_KEEPS),
    pipeline: new ProxyPipeline(PROXY_STAGES),
    upstream: createUpstreamClient(config.upstreamTimeout),
  };
  const app = polka({
    onError(err, _req, res) {
      ctx.logger.error('unhandled error in a route', { error: String(err) });
      if (!res.headersSent) sendError(res, DEFAULT_FORMAT, 500, 'internal_error', 'internal error');
      else res.destroy(err);
    },
    onNoMatch(req, res) {
      // Other paths under /v1 (models, token counting, batches...) pass through unchanged.
      if (req.path.startsWith('/v1/') && !isOwnV1Path(req.path))
        return void handleProxy(ctx, req, res, undefined);
      // the path only: a query string may hold a key (`?key=`) and is never echoed
      sendError(res, DEFAULT_FORMAT, 404, 'not_found', `no route for ${req.method} ${req.path}`);
    },
  });
  // `/p/NAME/v1/...` is attributed to project NAME and routed as `/v1/...` (issue 18, item 7);
  // the proxied paths themselves skip polka's router (`withExactPosts`).
  app.handler = withProjectPrefix(withCanonicalPaths(withExactPosts(app, app.handler)));
  try {
    if (config.mlcompress) {
      // Loaded before listening: with --mlcompress, ready means the model is loaded (spec 1.8).
      const ml = await loadMlCompressor(config, ctx.logger);
      if (ml) {
        ctx.compress = withMlPass(ctx.compress, ml);
        ctx.mlProvider = ml.provider;
        ctx.onClose.push(() => ml.close());
      }
    }
    // Large bodies go to a worker thread (started on the first one), unless the engine is not
    // the one the worker runs (a test's, or --mlcompress's) or there is no worker script.
    const script = workerScript();
    if (config.largeBodyBytes > 0 && ctx.compress === lazyEngine.compress && script) {
      const pool = new LargeBodyPool(config, ctx.logger, script);
      ctx.largeBodies = pool;
      ctx.onClose.push(() => pool.close());
    }
    for (const plugin of PLUGINS) await plugin(app, ctx);
    paceFullCollections();
    collectWhenIdle(ctx);
    scavengeWhenIdle(ctx);
  } catch (err) {
    await store?.close();
    throw err;
  }

  let closing: Promise<void> | undefined;
  return {
    ctx,
    listen() {
      return new Promise((resolve, reject) => {
        app.listen(config.port, config.host);
        const server = app.server!;
        server.keepAliveTimeout = 65_000;
        server.once('error', reject);
        server.once('listening', () => {
          // Nothing more is loaded while idle (issue 19: ready fast, small at rest): undici on the
          // first upstream call, the engine on the first request that compresses, the tokenizer
          // ranks on the first count, the dashboard's files on the first request for them.
          // glibc's thresholds are fixed as soon as the server listens (its free pages are given
          // back at idle): binding them takes ~6-13 ms, so a request already waiting, as a
          // health check polling the start, is answered first.
          setImmediate(() => fixMallocThresholds(ctx));
          const addr = server.address() as AddressInfo;
          const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
          resolve(`http://${host}:${addr.port}`);
        });
      });
    },
    close(graceMs = 10_000) {
      closing ??= (async () => {
        const server = app.server;
        if (server?.listening) {
          const closed = new Promise<void>((resolve) => server.close(() => resolve()));
          server.closeIdleConnections();
          // Keep-alive connections become idle as their in-flight requests end: close them then.
          const sweep = setInterval(() => server.closeIdleConnections(), 50);
          const timer = setTimeout(() => server.closeAllConnections(), graceMs);
          await closed;
          clearInterval(sweep);
          clearTimeout(timer);
        }
        // Requests whose connections were just cut unwind (upstream call cancelled, event emitted):
        // wait for them, briefly, so they reach the stats and the request log before those close.
        if (ctx.inFlight.size > 0) {
          let wait: NodeJS.Timeout | undefined;
          await Promise.race([
            Promise.allSettled([...ctx.inFlight]),
            new Promise((resolve) => {
              wait = setTimeout(resolve, 2_000);
            }),
          ]);
          clearTimeout(wait);
        }
        for (const hook of ctx.onClose.reverse()) {
          try {
            await hook();
          } catch (err) {
            ctx.logger.error('shutdown hook failed', { error: String(err) });
          }
        }
        await ctx.upstream.close();
        await ctx.ccr.close?.();
        await ctx.store?.close();
      })();
      return closing;
    },
  };
}
