import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { isSvcError, SvcError } from '../errors.js';
import type { RequestFinishedEvent } from '../events.js';
import { cacheAwareSavings, projectedSavingsUsd, roundCost } from '../stats/cache-aware.js';
import { priceRequest } from '../stats/cost.js';
import type { PendingEvent, ServerContext } from './context.js';

export type { PendingEvent } from './context.js';

/** A new event with every field at its "nothing happened" value. */
export function startEvent(
  ctx: ServerContext,
  path: string,
  format: RequestFinishedEvent['format'],
): PendingEvent {
  return {
    start: performance.now(),
    event: {
      time: new Date(ctx.now()),
      path,
      format,
      mode: ctx.config.optimize && !ctx.config.observe ? 'optimize' : 'passthrough',
      model: undefined,
      stream: false,
      status: 0,
      upstreamStatus: undefined,
      tokensBefore: 0,
      tokensAfter: 0,
      tokensSaved: 0,
      transforms: [],
      latencyMs: 0,
      overheadMs: 0,
      usage: undefined,
      costUsd: undefined,
      savingsUsd: undefined,
      cached: false,
      rateLimited: false,
      compressionFailed: false,
      errorCode: undefined,
      keyHash: undefined,
      requestId: randomUUID(),
      // the fields set on some requests only, present on all: every event then has one shape, which
      // the observers read fast (an object grown field by field in different orders does not)
      tokensAdded: undefined,
      streamedOutputTokens: undefined,
      project: undefined,
      client: undefined,
      retrievalRounds: undefined,
      retrievalTokens: undefined,
      counterfactual: undefined,
      cacheAwareSavingsUsd: undefined,
      projected: undefined,
    },
  };
}

/** Milliseconds since the request arrived, rounded to 0.01 ms. */
export function elapsedMs(pending: PendingEvent): number {
  return Math.round((performance.now() - pending.start) * 100) / 100;
}

/** Sets latency and publishes the event once (`publishFinished`); later calls do nothing. */
export function emitFinished(ctx: ServerContext, pending: PendingEvent & { emitted?: boolean }): void {
  if (pending.emitted) return;
  pending.emitted = true;
  pending.event.latencyMs = elapsedMs(pending);
  publishFinished(ctx, pending.event);
}

/**
 * Prices a finished request once (`costUsd`, `savingsUsd`, from the stats'
 * pricing table), freezes the event and emits it as `request.finished`.
 * Observers (stats, metrics, logs, budget settlement, telemetry) read it and
 * never write to it.
 */
export function publishFinished(ctx: ServerContext, event: RequestFinishedEvent): void {
  if (ctx.pricing) {
    const priced = priceRequest(ctx.pricing, event);
    event.costUsd = priced.costUsd;
    event.savingsUsd = priced.savingsUsd;
    for (const round of event.retrievalRounds ?? [])
      round.costUsd = roundCost(ctx.pricing, event.model, round.usage);
    event.cacheAwareSavingsUsd = cacheAwareSavings(ctx.pricing, event);
    if (event.projected) event.projected.savingsUsd = projectedSavingsUsd(ctx.pricing, event);
  }
  if (event.usage) Object.freeze(event.usage);
  if (event.projected) Object.freeze(event.projected);
  Object.freeze(event);
  try {
    ctx.bus.emit('request.finished', event);
  } catch (err) {
    // An observer's bug must not break the request path; it is still reported.
    ctx.logger.error('a request.finished subscriber threw', { error: String(err) });
  }
}

/** Any thrown value as an SvcError (unknown errors become SVC_INTERNAL, 500). */
export function asSvcError(err: unknown): SvcError {
  if (isSvcError(err)) return err;
  return new SvcError('SVC_INTERNAL', 'internal error', { cause: err });
}
