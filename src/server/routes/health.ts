import type { RoutePlugin } from '../context.js';
import { sendJson } from '../respond.js';

/**
 * `GET /health`: the health record of spec section 2. Its `stats` block comes
 * from the stats part's live counters (`ctx.liveStats`), so it always agrees
 * with `/stats`; the local count is only a fallback for a server built
 * without the stats plugin.
 */
export const healthRoutes: RoutePlugin = (app, ctx) => {
  const totals = { requests: 0, before: 0, saved: 0 };
  ctx.bus.on('request.finished', (e) => {
    totals.requests += 1;
    totals.before += e.tokensBefore;
    totals.saved += e.tokensSaved;
  });
  app.get('/health', (_req, res) => {
    sendJson(res, 200, {
      status: 'ok',
      optimize: ctx.config.optimize,
      version: ctx.version,
      uptime_s: Math.round((ctx.now() - ctx.startedAt) / 1000),
      stats: ctx.liveStats?.health() ?? {
        total_requests: totals.requests,
        tokens_saved: totals.saved,
        savings_percent: totals.before > 0 ? Math.round((totals.saved / totals.before) * 10_000) / 100 : 0,
      },
    });
  });
};
