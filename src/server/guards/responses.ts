import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ProviderFormat } from '../../formats/index.js';
import { type BudgetRefusal, formatUsd } from '../../guards/budget.js';
import { type RateDecision, rateLimitHeaders } from '../../guards/rate-limiter.js';
import type { CachedResponse } from '../../guards/response-cache.js';
import { sendError } from '../respond.js';

/** The `x-service-cache` response header: how the cache answered. */
export type CacheOutcome = 'HIT' | 'MISS' | 'BYPASS';

/** Response header naming the cache outcome; the same name on a request asks for a bypass. */
export const CACHE_HEADER = 'x-service-cache';

/** True when the request carries `x-service-cache: bypass` (any case). */
export function wantsCacheBypass(req: IncomingMessage): boolean {
  const value = req.headers[CACHE_HEADER];
  const text = Array.isArray(value) ? value.join(',') : (value ?? '');
  return text.trim().toLowerCase() === 'bypass';
}

/**
 * Answers from the cache: the stored status, content type and body (a
 * stream is replayed as the SSE bytes the upstream sent, final event
 * included), with `x-service-cache: HIT`.
 */
export function sendCached(res: ServerResponse, entry: CachedResponse): void {
  const headers: Record<string, string> = {
    ...entry.headers,
    'content-length': String(entry.body.length),
    [CACHE_HEADER]: 'HIT',
  };
  if (entry.mode === 'sse') headers['cache-control'] = 'no-cache';
  res.writeHead(entry.status, headers);
  res.end(entry.body);
}

/**
 * 429 in the provider's error shape with `Retry-After` and the four
 * `x-ratelimit-*` headers.
 */
export function sendRateLimited(
  res: ServerResponse,
  format: ProviderFormat,
  decision: RateDecision & { allowed: false },
): void {
  const s = decision.snapshot;
  const what =
    decision.limit === 'requests'
      ? `${s.limitRequests} requests per minute`
      : `${s.limitTokens} tokens per minute`;
  sendError(
    res,
    format,
    429,
    'rate_limit_error',
    `rate limit of ${what} for this API key reached; retry in ${decision.retryAfterS} s`,
    rateLimitHeaders(s, decision.retryAfterS),
  );
}

/**
 * 402 `budget_exceeded` in the provider's error shape, naming the period,
 * the limit, the spend and when the period resets. 402 rather than 429 so
 * that clients do not retry a refusal that will not lift for hours.
 */
export function sendBudgetExceeded(
  res: ServerResponse,
  format: ProviderFormat,
  refusal: BudgetRefusal,
): void {
  sendError(
    res,
    format,
    402,
    'budget_exceeded',
    `${refusal.period} budget of ${formatUsd(refusal.limitUsd)} exceeded (spent ${formatUsd(refusal.spendUsd)}); resets at ${refusal.resetsAt}`,
    {},
    {
      period: refusal.period,
      limit_usd: refusal.limitUsd,
      spend_usd: refusal.spendUsd,
      resets_at: refusal.resetsAt,
    },
  );
}
