import { createHash } from 'node:crypto';
import type { Counterfactual, ReportedUsage, RequestFinishedEvent } from '../events.js';
import { usageCost } from './cost.js';
import type { PrefixShape } from './prefix-shape.js';
import { type ModelPrice, matchModel, type PricingTable } from './pricing.js';

/**
 * Cache-aware savings (docs/stats.md, "Cache-aware savings"): what a request
 * would have been billed without svc, estimated from the client's own
 * requests and the provider's prompt cache, against what it was billed.
 *
 * The conversation's previous original request is kept as per-segment hashes
 * with cumulative token counts (tools, then each message), never as a body;
 * conversations and segments are bounded (principle 4).
 */

const PER_MILLION = 1_000_000;
/** Anthropic's prompt-cache lifetimes: 5 minutes by default, 1 hour for `ttl: "1h"` writes. */
export const CACHE_TTL_MS = 5 * 60_000;
export const CACHE_TTL_1H_MS = 60 * 60_000;
/** Conversations remembered (least recently used dropped first). */
export const MAX_CONVERSATIONS = 2000;
/** Segments remembered per conversation (a longer conversation's tail is not compared). */
export const MAX_SEGMENTS = 4096;
/** Segments remembered in all (16 bytes each: at most 16 MB); least recently used conversations go first. */
export const MAX_TOTAL_SEGMENTS = 1_000_000;

export { type PrefixShape, segmentHash } from './prefix-shape.js';

/** A remembered prefix, packed: 8 bytes of hash and 8 of tokens per segment. */
interface Remembered {
  hashes: Float64Array;
  cumulative: Float64Array;
  time: number;
}

/** Keys computed for each `first` array (a request shape's, the same for the same request sent again). */
const keysOf = new WeakMap<number[], Map<string, string>>();

/** Identity of a conversation: the client's key hash, the model, and its first segments (system, first message). */
export function conversationKey(
  keyHash: string | undefined,
  model: string | undefined,
  first: number[],
): string {
  const client = `${keyHash ?? ''}\n${model ?? ''}`;
  let known = keysOf.get(first);
  let key = known?.get(client);
  if (key === undefined) {
    key = createHash('sha1')
      .update(`${client}\n${first.join('\n')}`)
      .digest('base64')
      .slice(0, 22);
    if (!known) {
      known = new Map();
      keysOf.set(first, known);
    }
    // a handful of clients per conversation
    if (known.size >= 16) known.clear();
    known.set(client, key);
  }
  return key;
}

/** Tokens of the longest common run of leading segments of two prefixes. */
export function commonPrefixTokens(
  prev: { hashes: ArrayLike<number> },
  next: { hashes: ArrayLike<number>; cumulative: ArrayLike<number> },
): number {
  const n = Math.min(prev.hashes.length, next.hashes.length);
  let i = 0;
  while (i < n && prev.hashes[i] === next.hashes[i]) i += 1;
  return i === 0 ? 0 : (next.cumulative[i - 1] ?? 0);
}

/** The first `n` numbers of `values`, packed (a typed array copies a plain array of numbers at once). */
function packed(values: number[], n: number): Float64Array {
  return new Float64Array(values.length > n ? values.slice(0, n) : values);
}

/** True when `prev` holds exactly the first `n` segments of `shape` (hashes and counts). */
function sameSegments(prev: Remembered, shape: PrefixShape, n: number): boolean {
  if (prev.hashes.length !== n) return false;
  for (let i = 0; i < n; i++)
    if (prev.hashes[i] !== shape.hashes[i] || prev.cumulative[i] !== shape.cumulative[i]) return false;
  return true;
}

/**
 * The previous request's prefix of each conversation, bounded: at most
 * MAX_CONVERSATIONS of at most MAX_SEGMENTS segments each, and at most
 * MAX_TOTAL_SEGMENTS segments in all (16 bytes each), least recently used
 * conversations dropped first.
 */
export class ConversationPrefixes {
  private readonly seen = new Map<string, Remembered>();
  private segments = 0;

  constructor(
    private readonly maxConversations = MAX_CONVERSATIONS,
    private readonly maxSegments = MAX_TOTAL_SEGMENTS,
  ) {}

  /**
   * Tokens of `shape` shared with the conversation's previous request still
   * in the cache (`ttlMs` since it was sent), then remembers `shape` as its
   * latest request.
   */
  advance(key: string, shape: PrefixShape, now: number, ttlMs: number): number {
    const prev = this.seen.get(key);
    const shared = prev && now - prev.time <= ttlMs ? commonPrefixTokens(prev, shape) : 0;
    if (prev) {
      this.seen.delete(key);
      this.segments -= prev.hashes.length;
    }
    const n = Math.min(shape.hashes.length, MAX_SEGMENTS);
    // the same prefix again (a request sent again): its packed copy as it is
    const again = prev && sameSegments(prev, shape, n);
    this.seen.set(key, {
      hashes: again ? prev.hashes : packed(shape.hashes, n),
      cumulative: again ? prev.cumulative : packed(shape.cumulative, n),
      time: now,
    });
    this.segments += n;
    while (this.seen.size > this.maxConversations || this.segments > this.maxSegments) {
      const oldest = this.seen.keys().next().value;
      if (oldest === undefined || oldest === key) break;
      this.segments -= this.seen.get(oldest)?.hashes.length ?? 0;
      this.seen.delete(oldest);
    }
    return shared;
  }

  /** Conversations remembered. */
  get size(): number {
    return this.seen.size;
  }

  /** Segments remembered in all. */
  get segmentCount(): number {
    return this.segments;
  }
}

/** True when the request used the provider's prompt cache (it read or wrote cache tokens). */
function usesCache(usage: ReportedUsage): boolean {
  return usage.cacheRead + usage.cacheWrite > 0;
}

/**
 * USD of a request of `tokens` input tokens of which `prefix` are in the
 * provider's cache, priced like the actual request's first answer (`shape`):
 * the same uncached tail (`shape.input`), the rest written at the same mix of
 * 5-minute and 1-hour writes, the same output. A request that used no cache
 * is priced as plain input. Counts are in the upstream's tokens.
 */
export function cachedRequestCost(
  price: ModelPrice,
  tokens: number,
  prefix: number,
  shape: ReportedUsage,
): number {
  const output = shape.output * price.output;
  if (!usesCache(shape)) return (tokens * price.input + output) / PER_MILLION;
  const read = Math.min(prefix, tokens);
  const tail = Math.min(shape.input, tokens - read);
  const written = tokens - read - tail;
  const share1h =
    shape.cacheWrite > 0 ? Math.min(shape.cacheWrite1h ?? 0, shape.cacheWrite) / shape.cacheWrite : 0;
  const writeRate = (1 - share1h) * price.cacheWrite + share1h * price.cacheWrite1h;
  return (read * price.cacheRead + tail * price.input + written * writeRate + output) / PER_MILLION;
}

/**
 * Factor from svc's token counts to the upstream's: the input the upstream
 * billed for the first answer over svc's count of what was forwarded (1
 * without usage). svc counts Claude models with an estimate; the factor
 * keeps the estimate in the invoice's units.
 */
export function calibration(cf: Counterfactual): number {
  const u = cf.firstUsage;
  if (!u || cf.forwarded <= 0) return 1;
  const billed = u.input + u.cacheRead + u.cacheWrite;
  return billed > 0 ? billed / cf.forwarded : 1;
}

/** The cache-aware estimate of the request without svc, in USD. */
export function estimateWithoutSvc(price: ModelPrice, cf: Counterfactual, streamedOutput = 0): number {
  const k = calibration(cf);
  const tokens = Math.round(cf.original * k);
  const prefix = Math.round(cf.cachedPrefix * k);
  const shape: ReportedUsage = cf.firstUsage ?? {
    input: tokens,
    output: streamedOutput,
    cacheRead: 0,
    cacheWrite: 0,
  };
  return cachedRequestCost(price, tokens, prefix, shape);
}

/**
 * Cache-aware USD saved by a priced event: the estimate without svc less
 * what the request was billed (its retrieval rounds included). Undefined
 * when unknown: no estimate inputs, unknown model or cost, or not billed.
 */
export function cacheAwareSavings(table: PricingTable, event: RequestFinishedEvent): number | undefined {
  const cf = event.counterfactual;
  if (!cf || event.costUsd === undefined || event.cached || event.status >= 400) return undefined;
  const key = matchModel(table, event.model);
  const price = key === undefined ? undefined : table.prices.get(key);
  if (!price) return undefined;
  // --observe forwarded the request untouched: it was billed what it would have been without svc.
  if (event.projected) return 0;
  return estimateWithoutSvc(price, cf, event.streamedOutputTokens ?? 0) - event.costUsd;
}

/**
 * `--observe`: cache-aware USD compression would have saved: the estimate of
 * the request as sent (which is what was billed) less the estimate of the
 * compressed request, both priced like the actual answer.
 */
export function projectedSavingsUsd(table: PricingTable, event: RequestFinishedEvent): number | undefined {
  const cf = event.counterfactual;
  const projected = event.projected;
  if (!cf || !projected || event.cached || event.status >= 400) return undefined;
  const key = matchModel(table, event.model);
  const price = key === undefined ? undefined : table.prices.get(key);
  if (!price) return undefined;
  const k = calibration(cf);
  const shape: ReportedUsage = cf.firstUsage ?? {
    input: Math.round(cf.original * k),
    output: 0,
    cacheRead: 0,
    cacheWrite: 0,
  };
  const without = cachedRequestCost(
    price,
    Math.round(cf.original * k),
    Math.round(cf.cachedPrefix * k),
    shape,
  );
  const withSvc = cachedRequestCost(
    price,
    Math.round(projected.tokensAfter * k),
    Math.round((cf.projectedPrefix ?? 0) * k),
    shape,
  );
  return without - withSvc;
}

/** Prices each retrieval round's usage (undefined: unknown model or no usage). */
export function roundCost(table: PricingTable, model: string | undefined, usage: ReportedUsage | undefined) {
  const key = matchModel(table, model);
  const price = key === undefined ? undefined : table.prices.get(key);
  return price && usage ? usageCost(price, usage) : undefined;
}

/** Sum of usages (each tier); undefined when none is known. */
export function sumUsage(usages: Array<ReportedUsage | undefined>): ReportedUsage | undefined {
  let out: ReportedUsage | undefined;
  for (const u of usages) {
    if (!u) continue;
    out ??= { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cacheWrite1h: 0 };
    out.input += u.input;
    out.output += u.output;
    out.cacheRead += u.cacheRead;
    out.cacheWrite += u.cacheWrite;
    out.cacheWrite1h = (out.cacheWrite1h ?? 0) + (u.cacheWrite1h ?? 0);
  }
  return out;
}
