import type { ReportedUsage, RequestFinishedEvent } from '../events.js';
import { type ModelPrice, matchModel, type PricingTable } from './pricing.js';

const PER_MILLION = 1_000_000;

/** What one request cost and saved, as the stats compute it. */
export interface RequestCost {
  /** USD billed for the request; undefined when the model's price is unknown. 0 when nothing was billed. */
  costUsd: number | undefined;
  /** USD that compression saved (tokens saved x input price); undefined when the price is unknown. */
  savingsUsd: number | undefined;
  /** Pricing-table key of the model, undefined when unknown. Bounded: usable as a metrics label. */
  modelKey: string | undefined;
  /** True when the upstream was billed but reported no usage, so the cost is the counted input only. */
  estimated: boolean;
  /** True when the provider billed this request (the upstream answered 2xx or reported usage). */
  billed: boolean;
}

/**
 * USD for reported usage; each tier at its own rate: base input, output,
 * cache reads, 5-minute cache writes and 1-hour cache writes.
 */
export function usageCost(price: ModelPrice, usage: ReportedUsage): number {
  const write1h = Math.min(usage.cacheWrite1h ?? 0, usage.cacheWrite);
  return (
    (usage.input * price.input +
      usage.output * price.output +
      usage.cacheRead * price.cacheRead +
      (usage.cacheWrite - write1h) * price.cacheWrite +
      write1h * price.cacheWrite1h) /
    PER_MILLION
  );
}

/** USD that `tokensSaved` input tokens would have cost. */
export function savingsCost(price: ModelPrice, tokensSaved: number): number {
  return (tokensSaved * price.input) / PER_MILLION;
}

/**
 * True when a request's saved tokens count as savings: it was compressed and
 * answered (not from the cache, not an error), so the provider really was
 * sent (or, for `/v1/compress`, handed back) fewer tokens.
 */
export function countsAsSaving(event: RequestFinishedEvent): boolean {
  return event.tokensSaved > 0 && event.status < 400 && !event.cached;
}

/**
 * Prices one finished request. Usage the upstream reported wins (cache reads
 * and writes at their own rates); without it the counted tokens sent are priced
 * as input (output unknown, `estimated: true`). A request the provider did not
 * bill (cached answer, svc's own error, upstream error without usage,
 * `/v1/compress`) costs 0. An unknown model's cost and savings are undefined,
 * never 0 (principle 5).
 */
export function priceRequest(table: PricingTable, event: RequestFinishedEvent): RequestCost {
  const modelKey = matchModel(table, event.model);
  const price = modelKey === undefined ? undefined : table.prices.get(modelKey);
  const billed = isBilled(event);
  const saved = countsAsSaving(event) ? event.tokensSaved : 0;
  let costUsd: number | undefined = 0;
  let estimated = false;
  if (billed) {
    if (!price) costUsd = undefined;
    else if (event.usage) costUsd = usageCost(price, event.usage);
    else {
      costUsd =
        (event.tokensAfter * price.input + (event.streamedOutputTokens ?? 0) * price.output) / PER_MILLION;
      estimated = true;
    }
  }
  let savingsUsd: number | undefined = 0;
  if (saved > 0) savingsUsd = price ? savingsCost(price, saved) : undefined;
  return { costUsd, savingsUsd, modelKey, estimated, billed };
}

/** True when the provider billed the request: not from the cache, and it answered 2xx or reported usage. */
function isBilled(event: RequestFinishedEvent): boolean {
  const upstreamOk =
    event.upstreamStatus !== undefined && event.upstreamStatus >= 200 && event.upstreamStatus < 300;
  return !event.cached && (event.usage !== undefined || upstreamOk);
}

/**
 * The cost of an event already priced (`costUsd`, `savingsUsd`, set once
 * before it was emitted), with what the stats need besides: the model's
 * pricing key, whether the provider billed it, whether the cost is an estimate.
 */
export function costOf(table: PricingTable, event: RequestFinishedEvent): RequestCost {
  const billed = isBilled(event);
  return {
    costUsd: event.costUsd,
    savingsUsd: event.savingsUsd,
    modelKey: matchModel(table, event.model),
    estimated: billed && event.costUsd !== undefined && event.usage === undefined,
    billed,
  };
}
