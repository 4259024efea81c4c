import { queryFields } from '../../ccr/query.js';
import { openRedisToinStore } from '../../toin/redis-store.js';
import { openToinStore } from '../../toin/store.js';
import type { RoutePlugin } from '../context.js';

/** How often the proxy writes what TOIN learned (also on shutdown). */
export const TOIN_FLUSH_MS = 5000;

/**
 * Opens TOIN (`toinPath`) for the server: its advice goes to every engine
 * call (`ctx.toin`), and it learns from the `toin.observed` and `retrieved`
 * events. Written every few seconds when something changed, and on close.
 */
export const toinPlugin: RoutePlugin = async (_app, ctx) => {
  // --store: the fleet's counts in Redis (sent in batches by the store itself; flush below sends the rest).
  const shared = ctx.store
    ? await openRedisToinStore(ctx.store, { now: ctx.now, logger: ctx.logger })
    : undefined;
  const toin =
    shared ?? (await openToinStore({ path: ctx.config.toinPath, now: ctx.now, logger: ctx.logger }));
  ctx.toin = toin;
  let dirty = false;
  ctx.bus.on('toin.observed', (e) => {
    toin.observe(e.observations);
    dirty = true;
  });
  ctx.bus.on('retrieved', (e) => {
    // Without API keys the endpoint's callers are anonymous: they must not steer how TOIN
    // compresses for everyone (issue 15). The retrieval loop's and the CLI's calls count.
    if (!e.found || (e.via === 'endpoint' && ctx.config.apiKeys.length === 0)) return;
    if (toin.retrieved(e.hash, queryFields(e.query)).length > 0) dirty = true;
  });
  const flush = async () => {
    if (!dirty) return;
    dirty = false;
    try {
      await toin.flush();
    } catch (err) {
      dirty = true;
      ctx.logger.warn('could not write the TOIN file', { path: toin.path, error: String(err) });
    }
  };
  const timer = setInterval(() => void flush(), TOIN_FLUSH_MS);
  timer.unref();
  ctx.onClose.push(async () => {
    clearInterval(timer);
    await flush();
    await shared?.close();
  });
};
