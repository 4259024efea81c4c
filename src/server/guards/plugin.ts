import { createGuards } from '../../guards/index.js';
import type { RoutePlugin } from '../context.js';
import { settleHolds, takeHolds } from './holds.js';

/**
 * The guards part: builds the response cache, the rate limiter and the
 * budget (their stages are in `PROXY_STAGES`), feeds `/stats` and `/metrics` (`ctx.cacheStats`,
 * `ctx.budgetStatus`) and settles each request's holds from its
 * `request.finished` event. Registered after the stats part, which prices
 * the event first.
 */
export const guardsPlugin: RoutePlugin = async (_app, ctx) => {
  const guards = await createGuards(ctx.config, { now: ctx.now, logger: ctx.logger, store: ctx.store });
  ctx.guards = guards;
  const cache = guards.cache;
  if (cache) {
    ctx.cacheStats = () => {
      const s = cache.peekStats();
      return { entries: s.entries, hits: s.hits, misses: s.misses };
    };
  }
  ctx.budgetStatus = () => guards.budget.peekStatus();
  ctx.onClose.push(() => guards.close());
  ctx.bus.on('request.finished', function guardsSettlement(event) {
    const holds = takeHolds(event);
    if (!holds) return;
    settleHolds(ctx, event, holds).catch((err: unknown) => {
      ctx.logger.error('guards: could not settle a request', { error: String(err) });
    });
  });
};
