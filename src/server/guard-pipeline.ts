import type { IncomingMessage, ServerResponse } from 'node:http';
import { tokenizerFor } from '../engine/tokens.js';
import type { ChatMessage } from '../engine/types.js';
import type { RequestFinishedEvent } from '../events.js';
import { responseCacheKey } from '../guards/cache-key.js';
import { maxOutputTokens } from '../guards/cost-estimate.js';
import { ANONYMOUS_KEY } from '../guards/rate-limiter.js';
import { cacheableHeaders } from '../guards/response-cache.js';
import {
  createResponseRecorder,
  type ResponseRecorder,
  type StreamFormat,
} from '../guards/response-recorder.js';
import { keyHash, requestKey } from './auth.js';
import type { ServerContext } from './context.js';
import {
  CACHE_HEADER,
  type CacheOutcome,
  sendBudgetExceeded,
  sendCached,
  sendRateLimited,
  wantsCacheBypass,
} from './guard-responses.js';
import { holdUntilFinished, pricingEstimator } from './guards-plugin.js';
import type { ErrorShape } from './respond.js';

/** A proxied request as the guards see it, before compression. */
export interface GuardedRequest {
  /** Request path, e.g. `/v1/messages`. */
  path: string;
  format: StreamFormat;
  /** The body as the client sent it, parsed. */
  body: Record<string, unknown>;
  model: string | undefined;
  /** Tokens counted on the request before compression. */
  inputTokens: number;
  /** The request's pending `request.finished` event; the guards fill in their fields. */
  event: RequestFinishedEvent;
}

/** The request may go upstream: the cache outcome to announce, and how to store the answer. */
export interface GuardPass {
  /** `MISS` or `BYPASS`: send as `x-service-cache` with the upstream's answer. */
  cache: Exclude<CacheOutcome, 'HIT'>;
  /** Headers to add to the answer (`x-service-cache`). */
  headers: Record<string, string>;
  /**
   * A recorder for the upstream's answer, or undefined when it will not be
   * cached (bypass, cache off, not a 200). Feed it every body chunk sent to
   * the client and call `store` once the body ended cleanly.
   */
  record(
    status: number,
    headers: Record<string, string | string[] | number | undefined>,
  ): ResponseRecorder | undefined;
  /** Stores what `recorder` collected, when it is complete. */
  store(recorder: ResponseRecorder): void;
}

/**
 * The hash of the key the request carries (never the key), also recorded on
 * its event; requests without a key share `ANONYMOUS_KEY`.
 */
function clientKeyHash(req: IncomingMessage, event: RequestFinishedEvent): string {
  event.keyHash ??= keyHash(requestKey(req.headers));
  return event.keyHash ?? ANONYMOUS_KEY;
}

/**
 * Rate-limits `POST /v1/compress` per service key, in buckets of its own
 * (prefix `compress:`), reserving the tokens counted on `messages`; the
 * hold is settled with the request's `tokens_before`. Returns false when it
 * answered 429.
 */
export async function guardCompress(
  ctx: ServerContext,
  req: IncomingMessage,
  res: ServerResponse,
  event: RequestFinishedEvent,
  messages: ChatMessage[],
  model: string,
): Promise<boolean> {
  const limiter = ctx.guards?.rateLimiter;
  if (!limiter) return true;
  const tokens = tokenizerFor(model).countMessages(messages);
  const decision = await limiter.acquire(`compress:${clientKeyHash(req, event)}`, tokens);
  if (!decision.allowed) {
    Object.assign(event, { rateLimited: true, mode: 'rejected', status: 429, errorCode: 'SVC_RATE_LIMITED' });
    sendRateLimited(res, 'chat', decision);
    return false;
  }
  holdUntilFinished(event, { rate: decision.ticket });
  return true;
}

/**
 * Runs the guards of a proxied request, in order: rate limit (429), cache
 * lookup (a HIT is answered from the cache, the upstream not called), budget
 * reservation (402). Returns undefined when the request has been answered,
 * else what the proxy needs to go on. The rate-limit token hold and the
 * budget reservation are settled from the request's `request.finished`
 * event (see `guardsPlugin`).
 */
export async function guardRequest(
  ctx: ServerContext,
  req: IncomingMessage,
  res: ServerResponse,
  input: GuardedRequest,
): Promise<GuardPass | undefined> {
  const guards = ctx.guards;
  const shape: ErrorShape = input.format;
  const { event } = input;
  const client = clientKeyHash(req, event);

  if (guards?.rateLimiter) {
    const decision = await guards.rateLimiter.acquire(client, input.inputTokens);
    if (!decision.allowed) {
      Object.assign(event, {
        rateLimited: true,
        mode: 'rejected',
        status: 429,
        errorCode: 'SVC_RATE_LIMITED',
      });
      sendRateLimited(res, shape, decision);
      return undefined;
    }
    holdUntilFinished(event, { rate: decision.ticket });
  }

  const cache = guards?.cache;
  const bypass = !cache || wantsCacheBypass(req);
  const key = bypass
    ? undefined
    : responseCacheKey({ path: input.path, body: input.body, keyHash: client, headers: req.headers });
  if (cache && key) {
    const hit = await cache.get(key);
    if (hit) {
      Object.assign(event, { cached: true, mode: 'cached', status: hit.status });
      sendCached(res, hit);
      return undefined;
    }
  }

  if (guards) {
    const estimate =
      input.model === undefined
        ? undefined
        : pricingEstimator(ctx)(input.model, input.inputTokens, maxOutputTokens(input.body));
    const decision = await guards.budget.reserve(estimate);
    if (!decision.allowed) {
      Object.assign(event, { mode: 'rejected', status: 402, errorCode: 'SVC_BUDGET_EXCEEDED' });
      sendBudgetExceeded(res, shape, decision);
      return undefined;
    }
    holdUntilFinished(event, { budget: decision.reservation });
  }

  const outcome: GuardPass['cache'] = key ? 'MISS' : 'BYPASS';
  return {
    cache: outcome,
    headers: { [CACHE_HEADER]: outcome },
    record(status, headers) {
      if (!cache || !key || status !== 200) return undefined;
      return createResponseRecorder({
        format: input.format,
        mode: input.body.stream === true ? 'sse' : 'json',
        status,
        headers: cacheableHeaders(headers),
        model: input.model,
        maxBytes: ctx.config.cacheMaxBytes,
        now: ctx.now,
      });
    },
    store(recorder) {
      const entry = recorder.finish();
      if (!cache || !key || !entry) return;
      cache.set(key, entry).catch((err: unknown) => {
        ctx.logger.error('cache: could not store an answer', { error: String(err) });
      });
    },
  };
}
