import { isSvcError } from '../../errors.js';
import type { RequestFinishedEvent } from '../../events.js';
import { DEFAULT_FORMAT } from '../../formats/index.js';
import { attributionOf, Breakdown, registerBreakdownMetrics } from '../../stats/breakdown.js';
import { costOf, countsAsSaving } from '../../stats/cost.js';
import { createFleetStats } from '../../stats/fleet-stats.js';
import { buildHistoryBy, parseHistoryBy, renderHistoryBy } from '../../stats/history-by.js';
import { parseHistoryExport, renderHistory } from '../../stats/history-export.js';
import { buildHistoryRecord } from '../../stats/history-record.js';
import { LiveStats } from '../../stats/live-stats.js';
import { createMetrics, type SvcMetrics } from '../../stats/metrics.js';
import { loadPricing, type PricingTable } from '../../stats/pricing.js';
import { RedisSavingsStore, type SavingsStore } from '../../stats/redis-savings.js';
import { zeroAmount } from '../../stats/savings-data.js';
import { SavingsFile } from '../../stats/savings-store.js';
import {
  buildStatsRecord,
  RECENT_HISTORY_SIZE,
  type RetrievalCounts,
  type StatsRecord,
} from '../../stats/stats-record.js';
import type { RoutePlugin, ServerContext } from '../context.js';
import { memoryParts } from '../memory.js';
import { sendError, sendJson } from '../respond.js';

/** Models whose missing price has been logged (one note each, bounded). */
const MAX_NOTED_MODELS = 100;

function subscribe(
  ctx: ServerContext,
  pricing: PricingTable,
  live: LiveStats,
  metrics: SvcMetrics,
  savings: SavingsStore,
  breakdown: Breakdown,
) {
  const noted = new Set<string>();
  ctx.bus.on('request.finished', function statsSubscriber(event: RequestFinishedEvent) {
    try {
      // The event was priced once before it was emitted (`emitFinished`).
      const priced = costOf(pricing, event);
      const model = event.model?.slice(0, 100);
      if (
        priced.modelKey === undefined &&
        model &&
        (priced.billed || countsAsSaving(event)) &&
        !noted.has(model)
      ) {
        if (noted.size < MAX_NOTED_MODELS) noted.add(model);
        ctx.logger.info('no price for this model: its cost and savings in USD are reported as unknown', {
          model,
          hint: 'add it to a table named by SERVICE_PRICING_PATH',
        });
      }
      live.apply(event, priced);
      metrics.observe(event, priced);
      breakdown.apply(event, priced);
      if (countsAsSaving(event)) {
        const { project, model, client } = attributionOf(event);
        savings.record({
          time: event.time.getTime(),
          tokensSaved: event.tokensSaved,
          savingsUsd: priced.savingsUsd,
          attribution: { project, model, client },
          cacheAwareUsd: event.cacheAwareSavingsUsd,
        });
      } else if (event.cacheAwareSavingsUsd !== undefined && event.cacheAwareSavingsUsd !== 0) {
        savings.record({
          time: event.time.getTime(),
          tokensSaved: 0,
          savingsUsd: 0,
          cacheAwareUsd: event.cacheAwareSavingsUsd,
          cacheAwareOnly: true,
        });
      }
    } catch (err) {
      ctx.logger.error('stats could not count a request', { error: String(err) });
    }
  });
}

/** Attribution per server (issue 18, item 7), shown as `/stats` `breakdown`. */
const breakdowns = new WeakMap<ServerContext, Breakdown>();

/** Marker redemptions per server (the `retrieved` events), shown as `/stats` `retrievals`. */
const retrievalCounts = new WeakMap<ServerContext, RetrievalCounts>();

/** `/stats` for this server: live counters, the savings file and the guards' blocks. */
export async function statsRecordFor(ctx: ServerContext): Promise<StatsRecord> {
  const live = ctx.liveStats ?? new LiveStats();
  const summary = ctx.savings ? await ctx.savings.summary(RECENT_HISTORY_SIZE) : undefined;
  const record = buildStatsRecord({
    // --store: the fleet's counters; this replica's own are in `store.replica`.
    totals: ctx.fleet ? await ctx.fleet.totals() : live.totals(),
    sessionHistory: live.sessionHistory(),
    lifetime: summary?.lifetime ?? zeroAmount(),
    history: summary?.history ?? [],
    fileState: summary?.state ?? 'missing',
    pricingAsOf: ctx.pricing?.asOf ?? '',
    cacheEnabled: ctx.config.cache,
    cache: ctx.cacheStats?.(),
    budget: ctx.budgetStatus?.(),
    startedAt: ctx.startedAt,
    now: ctx.now(),
  });
  const retrievals = retrievalCounts.get(ctx);
  if (retrievals) record.retrievals = { ...retrievals };
  // This server's own split (with --store too: the fleet's totals above, this replica's breakdown).
  const breakdown = breakdowns.get(ctx);
  if (breakdown) record.breakdown = breakdown.record();
  if (ctx.store) {
    const { requests, tokens, cost } = live.totals();
    record.store = {
      backend: 'redis',
      url: ctx.store.safeUrl,
      prefix: ctx.store.prefix,
      healthy: ctx.store.healthy,
      replica: { id: ctx.store.replicaId, requests, tokens, cost },
    };
  }
  return record;
}

/**
 * The stats part: prices and counts every `request.finished` event, keeps the
 * savings file, and serves `GET /stats`, `GET /stats-history` and `GET /metrics`.
 */
export const statsRoutes: RoutePlugin = async (app, ctx) => {
  const pricing = loadPricing({ pricingPath: ctx.config.pricingPath });
  const live = new LiveStats();
  const savings: SavingsStore = ctx.store
    ? new RedisSavingsStore(ctx.store, { logger: ctx.logger, now: ctx.now })
    : new SavingsFile({ path: ctx.config.savingsPath, logger: ctx.logger, now: ctx.now });
  await savings.open();
  const metrics = createMetrics({
    version: ctx.version,
    startedAt: ctx.startedAt,
    now: ctx.now,
    cacheStats: () => ctx.cacheStats?.(),
    memory: () => memoryParts(ctx),
  });
  Object.assign(ctx, { pricing, liveStats: live, savings });
  const breakdown = new Breakdown();
  breakdowns.set(ctx, breakdown);
  registerBreakdownMetrics(metrics.registry, breakdown);
  subscribe(ctx, pricing, live, metrics, savings, breakdown);
  const retrievals: RetrievalCounts = { total: 0, endpoint: 0, tool: 0, not_found: 0 };
  retrievalCounts.set(ctx, retrievals);
  ctx.bus.on('retrieved', (e) => {
    if (!e.found) retrievals.not_found++;
    else {
      retrievals.total++;
      if (e.via === 'endpoint' || e.via === 'tool') retrievals[e.via]++;
    }
  });
  const fleet = ctx.store
    ? createFleetStats(ctx.store, { live, registry: metrics.registry, logger: ctx.logger })
    : undefined;
  if (fleet) {
    ctx.fleet = fleet;
    ctx.bus.on('request.finished', () => fleet.changed());
  }
  ctx.onClose.push(async () => {
    await fleet?.close();
    await savings.close();
  });

  app.get('/stats', async (_req, res) => {
    sendJson(res, 200, await statsRecordFor(ctx), { 'cache-control': 'no-store' });
  });

  app.get('/stats-history', async (req, res) => {
    let request: ReturnType<typeof parseHistoryExport>;
    let by: ReturnType<typeof parseHistoryBy>;
    try {
      const query = (req as { query?: Record<string, unknown> }).query ?? {};
      request = parseHistoryExport({ format: query.format, series: query.series });
      by = parseHistoryBy(query.by);
    } catch (err) {
      if (!isSvcError(err)) throw err;
      sendError(res, DEFAULT_FORMAT, 400, 'invalid_request_error', err.message);
      return;
    }
    const data = (await savings.view()).data;
    const { contentType, body } = by
      ? renderHistoryBy(buildHistoryBy(data, by, ctx.now()), request)
      : renderHistory(buildHistoryRecord(data, ctx.now()), request);
    const headers: Record<string, string> = {
      'content-type': contentType,
      'content-length': String(Buffer.byteLength(body)),
      'cache-control': 'no-store',
    };
    if (request.format === 'csv')
      headers['content-disposition'] =
        `attachment; filename="svc-${request.series}${by ? `-by-${by}` : ''}.csv"`;
    res.writeHead(200, headers);
    res.end(body);
  });

  app.get('/metrics', async (_req, res) => {
    const { contentType, body } = fleet
      ? await fleet.metrics()
      : { contentType: metrics.registry.contentType, body: await metrics.registry.metrics() };
    res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' });
    res.end(body);
  });
};
