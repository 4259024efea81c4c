import { lruOfEntries } from '../lru.js';
import { fullBucket, msUntil, refill, type TokenBucket } from './token-bucket.js';

const MINUTE_MS = 60_000;

/** Bucket of requests that carry no API key at all. */
export const ANONYMOUS_KEY = 'anonymous';

/** Limits and what is left of them, for the `x-ratelimit-*` response headers. */
export interface RateLimitSnapshot {
  limitRequests: number;
  remainingRequests: number;
  limitTokens: number;
  remainingTokens: number;
}

/** An admitted request's hold on the token bucket, given back to `settle`. */
export interface RateTicket {
  keyHash: string;
  reservedTokens: number;
}

/** The answer of `acquire`. */
export type RateDecision =
  | { allowed: true; ticket: RateTicket; snapshot: RateLimitSnapshot }
  | {
      allowed: false;
      /** Which limit refused: the request count or the token count. */
      limit: 'requests' | 'tokens';
      /** Whole seconds until the request would be admitted (at least 1), for `Retry-After`. */
      retryAfterS: number;
      snapshot: RateLimitSnapshot;
    };

/**
 * Per-key rate limiting with two token buckets (requests per minute, tokens
 * per minute). Async so that a shared (Redis) implementation can replace the
 * in-memory one.
 */
export interface RateLimiter {
  /**
   * Admits a request of `estimatedTokens` for `keyHash` (never the raw key),
   * taking one request and the estimate from the buckets, or refuses it.
   */
  acquire(keyHash: string, estimatedTokens: number): Promise<RateDecision>;
  /**
   * Replaces the estimate with the tokens the upstream reported (`undefined`:
   * keep the estimate; 0: nothing reached the upstream, e.g. a cache hit).
   */
  settle(ticket: RateTicket, actualTokens: number | undefined): Promise<void>;
  /** Current state of a key's buckets. */
  peek(keyHash: string): Promise<RateLimitSnapshot>;
}

export interface MemoryRateLimiterOptions {
  rpm: number;
  tpm: number;
  now?: () => number;
  /** Most keys tracked at once; an evicted key starts again with full buckets. Default 100,000. */
  maxKeys?: number;
}

interface KeyBuckets {
  requests: TokenBucket;
  tokens: TokenBucket;
}

/**
 * The in-memory rate limiter. A request is admitted when its key has one
 * request left and at least `min(estimate, tpm)` tokens (so a request larger
 * than the whole minute's allowance still passes once the bucket is full,
 * leaving a debt); it then takes its full estimate.
 *
 * @example const d = await limiter.acquire(keyHash, 1200); if (!d.allowed) reply429(d)
 */
export function createMemoryRateLimiter(options: MemoryRateLimiterOptions): RateLimiter {
  const now = options.now ?? Date.now;
  const { rpm, tpm } = options;
  const keys = lruOfEntries<string, KeyBuckets>(options.maxKeys ?? 100_000);

  const bucketsOf = (keyHash: string, t: number): KeyBuckets => {
    let b = keys.get(keyHash);
    if (!b) {
      b = { requests: fullBucket(rpm, t), tokens: fullBucket(tpm, t) };
      keys.set(keyHash, b);
    }
    refill(b.requests, rpm, MINUTE_MS, t);
    refill(b.tokens, tpm, MINUTE_MS, t);
    return b;
  };
  const snapshotOf = (b: KeyBuckets): RateLimitSnapshot => ({
    limitRequests: rpm,
    remainingRequests: Math.max(0, Math.floor(b.requests.level)),
    limitTokens: tpm,
    remainingTokens: Math.max(0, Math.floor(b.tokens.level)),
  });

  return {
    async acquire(keyHash, estimatedTokens) {
      const t = now();
      const b = bucketsOf(keyHash, t);
      const estimate = Math.max(0, Math.ceil(estimatedTokens));
      const needTokens = Math.min(estimate, tpm);
      const waitRequests = msUntil(b.requests, 1, rpm, MINUTE_MS);
      const waitTokens = msUntil(b.tokens, needTokens, tpm, MINUTE_MS);
      if (waitRequests > 0 || waitTokens > 0) {
        return {
          allowed: false,
          limit: waitRequests >= waitTokens ? 'requests' : 'tokens',
          retryAfterS: Math.max(1, Math.ceil(Math.max(waitRequests, waitTokens) / 1000)),
          snapshot: snapshotOf(b),
        };
      }
      b.requests.level -= 1;
      b.tokens.level -= estimate;
      return { allowed: true, ticket: { keyHash, reservedTokens: estimate }, snapshot: snapshotOf(b) };
    },
    async settle(ticket, actualTokens) {
      if (actualTokens === undefined) return;
      const b = keys.get(ticket.keyHash);
      if (!b) return;
      refill(b.tokens, tpm, MINUTE_MS, now());
      b.tokens.level = Math.min(tpm, b.tokens.level + ticket.reservedTokens - Math.max(0, actualTokens));
    },
    async peek(keyHash) {
      const t = now();
      // An unknown key has full buckets; looking does not start tracking it.
      if (!keys.has(keyHash)) return snapshotOf({ requests: fullBucket(rpm, t), tokens: fullBucket(tpm, t) });
      return snapshotOf(bucketsOf(keyHash, t));
    },
  };
}

/**
 * The `x-ratelimit-*` headers of a 429 (and `Retry-After` when given),
 * named as the chat-completions provider names them.
 */
export function rateLimitHeaders(snapshot: RateLimitSnapshot, retryAfterS?: number): Record<string, string> {
  const headers: Record<string, string> = {
    'x-ratelimit-limit-requests': String(snapshot.limitRequests),
    'x-ratelimit-remaining-requests': String(snapshot.remainingRequests),
    'x-ratelimit-limit-tokens': String(snapshot.limitTokens),
    'x-ratelimit-remaining-tokens': String(snapshot.remainingTokens),
  };
  if (retryAfterS !== undefined) headers['retry-after'] = String(retryAfterS);
  return headers;
}
