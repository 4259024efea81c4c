import type { RequestFinishedEvent } from '../../events.js';
import type { BudgetReservation } from '../../guards/budget.js';
import type { CostEstimator } from '../../guards/cost-estimate.js';
import type { RateTicket } from '../../guards/rate-limiter.js';
import { priceFor } from '../../stats/pricing.js';
import type { ServerContext } from '../context.js';

/** What a request holds on the guards until its `request.finished` event settles it. */
export interface GuardHolds {
  rate?: RateTicket | undefined;
  /** Set while `rate` holds an upper bound of the request's tokens (see `RateBound`). */
  rateBound?: RateBound | undefined;
  budget?: BudgetReservation | undefined;
}

/**
 * A rate-limit hold taken for an upper bound of the request's tokens, so
 * that the exact count is not made before forwarding (issue 19): `exact()`
 * counts them and gives back what the bound held beyond the count (at most
 * once); `drop()` forgets the bound once the hold is settled otherwise.
 */
export interface RateBound {
  exact(): void;
  drop(): void;
}

/**
 * Holds of requests in flight, keyed by their pending event object: the
 * settlement observer finds them there when the event is emitted.
 */
const HOLDS = new WeakMap<RequestFinishedEvent, GuardHolds>();

/** Registers what `event`'s request holds, to be settled when the event is emitted. */
export function holdUntilFinished(event: RequestFinishedEvent, holds: GuardHolds): void {
  const prior = HOLDS.get(event);
  HOLDS.set(event, { ...prior, ...holds });
}

/** Tokens the upstream reported for a request: undefined when it reported none. */
function reportedTokens(event: RequestFinishedEvent): number | undefined {
  const u = event.usage;
  return u === undefined ? undefined : u.input + u.output + u.cacheRead + u.cacheWrite;
}

/**
 * Settles a finished request's holds: the rate limiter gets the reported
 * tokens (0 when the upstream was never called, the estimate when it was
 * but reported nothing); the budget gets the cost the stats priced
 * (0 for a hit or an error, the estimate when the cost is unknown).
 */
export async function settleHolds(
  ctx: ServerContext,
  event: RequestFinishedEvent,
  holds: GuardHolds,
): Promise<void> {
  const guards = ctx.guards;
  if (!guards) return;
  if (holds.rate && guards.rateLimiter) {
    // /v1/compress calls no model: its tokens are the ones it was sent.
    const tokens =
      event.format === 'compress'
        ? event.tokensBefore
        : event.upstreamStatus === undefined || event.cached
          ? 0
          : reportedTokens(event);
    // without a report the hold stays as the estimate: the exact count, not its bound
    if (tokens === undefined) holds.rateBound?.exact();
    holds.rateBound?.drop();
    await guards.rateLimiter.settle(holds.rate, tokens);
  }
  if (holds.budget) {
    const cost = event.upstreamStatus === undefined || event.cached ? 0 : event.costUsd;
    await guards.budget.settle(holds.budget, cost);
  }
}

/** The estimator the budget reserves with: the stats' pricing table. */
export function pricingEstimator(ctx: ServerContext): CostEstimator {
  return (model, inputTokens, maxOutputTokens) => {
    const price = ctx.pricing ? priceFor(ctx.pricing, model) : undefined;
    if (!price) return undefined;
    return (inputTokens * price.input + maxOutputTokens * price.output) / 1_000_000;
  };
}

/** Takes (and forgets) the holds registered for `event`. */
export function takeHolds(event: RequestFinishedEvent): GuardHolds | undefined {
  const holds = HOLDS.get(event);
  HOLDS.delete(event);
  return holds;
}
