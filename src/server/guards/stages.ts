import type { IncomingMessage, ServerResponse } from 'node:http';
import { tokenizerFor } from '../../engine/tokens.js';
import type { ChatMessage } from '../../engine/types.js';
import type { RequestFinishedEvent } from '../../events.js';
import { DEFAULT_FORMAT, parseRequest } from '../../formats/index.js';
import { responseCacheKey } from '../../guards/cache-key.js';
import { maxOutputTokens } from '../../guards/cost-estimate.js';
import { credentialOf } from '../../guards/credentials.js';
import type { Guards } from '../../guards/index.js';
import {
  ANONYMOUS_KEY,
  type RateDecision,
  type RateLimiter,
  type RateTicket,
} from '../../guards/rate-limiter.js';
import { cacheableHeaders, type ResponseCache } from '../../guards/response-cache.js';
import { createResponseRecorder } from '../../guards/response-recorder.js';
import { createStreamOutput } from '../../guards/stream-output.js';
import { unpricedModel } from '../../guards/unpriced.js';
import { keyHash } from '../auth.js';
import type { ServerContext } from '../context.js';
import type { CachePlan, ProxyExchange, ProxyStage, UpstreamResponse } from '../proxy/pipeline.js';
import { sendSvcError } from '../respond.js';
import { holdUntilFinished, pricingEstimator, type RateBound } from './holds.js';
import {
  type CacheOutcome,
  sendBudgetExceeded,
  sendCached,
  sendRateLimited,
  wantsCacheBypass,
} from './responses.js';

/**
 * The hash of the key the request carries (never the key), also recorded on
 * its event; requests without a key share `ANONYMOUS_KEY`.
 */
function clientKeyHash(req: IncomingMessage, event: RequestFinishedEvent): string {
  event.keyHash ??= keyHash(credentialOf(req.headers, (req as { search?: string | null }).search));
  return event.keyHash ?? ANONYMOUS_KEY;
}

/**
 * What the guard stage will compute from the body: its token count (rate
 * limit, budget) and its cache key. A large body's are computed by the
 * worker that reads it (`BodyFacts`), so they are asked for ahead.
 */
export function guardNeeds(ex: ProxyExchange): { tokens: boolean; cacheKey: boolean } {
  const guards = ex.ctx.guards;
  if (!guards || !ex.format || ex.countsTokens) return { tokens: false, cacheKey: false };
  return {
    tokens: guards.rateLimiter !== undefined || guards.budget.enabled,
    cacheKey: guards.cache !== undefined && !wantsCacheBypass(ex.req),
  };
}

/**
 * `measure` of the request's messages as the client sent them (before
 * compression) with its model's tokenizer; undefined when the body is not
 * readable or `measure` fails.
 */
function inputTokens(ex: ProxyExchange, measure: 'count' | 'atMost'): number | undefined {
  if (!ex.format || !ex.json) return undefined;
  try {
    const parsed = ex.parsed ?? parseRequest(ex.format, ex.json);
    const tokenizer = tokenizerFor(parsed.model ?? 'unknown');
    return measure === 'count'
      ? tokenizer.countMessages(parsed.messages)
      : tokenizer.countMessagesAtMost?.(parsed.messages);
  } catch {
    return undefined;
  }
}

/** Tokens of the request as the client sent it (before compression); 0 when it is not readable. */
export function countInputTokens(ex: ProxyExchange): number {
  return inputTokens(ex, 'count') ?? 0;
}

/**
 * Takes the request's hold on the rate limiter. Given no count (`counted`),
 * it does not count a new conversation before forwarding (milliseconds of
 * BPE; issue 19): it asks for an upper bound of the count, and only when
 * the bound is refused for the count itself, so a request is refused exactly
 * when its count is. An admitted bound is brought down to the count once the
 * request has gone upstream (`afterForward`), or when the hold is settled.
 */
async function acquireRate(
  ex: ProxyExchange,
  limiter: RateLimiter,
  client: string,
  counted: number | undefined,
): Promise<RateDecision> {
  // an upper bound of the count without counting: a token is at least a byte of UTF-8, and texts
  // counted before count as counted
  const bound = counted === undefined ? inputTokens(ex, 'atMost') : undefined;
  if (bound !== undefined) {
    const decision = await limiter.acquire(client, bound);
    if (decision.allowed) {
      holdUntilFinished(ex.event, {
        rate: decision.ticket,
        rateBound: boundUntilForwarded(ex, limiter, decision.ticket),
      });
      return decision;
    }
  }
  const decision = await limiter.acquire(client, counted ?? countInputTokens(ex));
  if (decision.allowed) holdUntilFinished(ex.event, { rate: decision.ticket });
  return decision;
}

/** The `RateBound` of `ticket`, brought down to the count after forwarding. */
function boundUntilForwarded(ex: ProxyExchange, limiter: RateLimiter, ticket: RateTicket): RateBound {
  let open = true;
  const bound: RateBound = {
    exact() {
      if (!open) return;
      open = false;
      const tokens = countInputTokens(ex);
      if (tokens >= ticket.reservedTokens) return;
      // the limiter replaces what the ticket held with `tokens`, which the ticket holds from now on
      limiter.settle(ticket, tokens).catch((err: unknown) => {
        ex.ctx.logger.warn('rate limit: a hold was not brought down to its count', { error: String(err) });
      });
      ticket.reservedTokens = tokens;
    },
    drop() {
      open = false;
    },
  };
  ex.afterForward.push(bound.exact);
  return bound;
}

function reject(event: RequestFinishedEvent, status: number, errorCode: string, rateLimited = false): void {
  Object.assign(event, { mode: 'rejected', status, errorCode, rateLimited });
}

/**
 * Guards of a proxied request, after `parse` and before `compress`: rate
 * limit (429), cache lookup (a HIT answers from the cache, the upstream is
 * not called, nothing is charged), budget reservation (402). Holds are
 * settled from the request's `request.finished` event (`guardsPlugin`).
 */
export const guardStage: ProxyStage = {
  name: 'guards',
  run(ex, next) {
    const guards = ex.ctx.guards;
    if (!guards || !ex.format || ex.countsTokens) return next();
    const facts = ex.large?.facts;
    const cacheable = guards.cache && (ex.json || facts?.cacheKey !== undefined) && !wantsCacheBypass(ex.req);
    // nothing to hold, look up or reserve (no rate limit, no cache for it, no budget)
    if (!guards.rateLimiter && !cacheable && !guards.budget.enabled) {
      ex.cacheOutcome = 'BYPASS';
      return next();
    }
    return guard(ex, guards, Boolean(cacheable), next);
  },
};

/** The guards that hold, look up or reserve something, in order (see `guardStage`). */
async function guard(
  ex: ProxyExchange,
  guards: Guards,
  cacheable: boolean,
  next: () => Promise<void>,
): Promise<void> {
  const { ctx, req, res, event } = ex;
  const format = ex.format!;
  const client = clientKeyHash(req, event);
  // a large body: what the worker read of it (never parsed again here); the budget prices the count
  const facts = ex.large?.facts;
  const inputTokens = facts ? facts.inputTokens : guards.budget.enabled ? countInputTokens(ex) : undefined;

  if (guards.rateLimiter) {
    const decision = await acquireRate(ex, guards.rateLimiter, client, inputTokens);
    if (!decision.allowed) {
      reject(event, 429, 'SVC_RATE_LIMITED', true);
      sendRateLimited(res, format, decision);
      return;
    }
  }

  const cache = guards.cache;
  let outcome: CacheOutcome = 'BYPASS';
  const json = ex.json;
  if (cache && cacheable) {
    const key =
      facts?.cacheKey ??
      responseCacheKey({
        path: ex.path + ex.search,
        body: json!,
        keyHash: client,
        headers: req.headers,
      });
    const hit = await cache.get(key);
    if (hit) {
      Object.assign(event, { cached: true, mode: 'cached', status: hit.status });
      sendCached(res, hit);
      return;
    }
    outcome = 'MISS';
    ex.cachePlan = { key };
  }

  if (guards.budget.enabled && (json || facts?.object)) {
    const model = facts ? facts.model : typeof json!.model === 'string' ? json!.model : undefined;
    const maxOutput = facts ? facts.maxOutputTokens : maxOutputTokens(json!);
    const estimate =
      model === undefined ? undefined : pricingEstimator(ctx)(model, inputTokens ?? 0, maxOutput);
    if (estimate === undefined) {
      reject(event, 402, 'SVC_MODEL_UNPRICED');
      sendSvcError(res, format, unpricedModel(model));
      return;
    }
    const decision = await guards.budget.reserve(estimate);
    if (!decision.allowed) {
      reject(event, 402, 'SVC_BUDGET_EXCEEDED');
      sendBudgetExceeded(res, format, decision);
      return;
    }
    holdUntilFinished(event, { budget: decision.reservation });
    if (ex.event.stream) countStreamedOutput(ex, model);
  }

  ex.cacheOutcome = outcome;
  await next();
}

/**
 * Counts the output of a stream as it is relayed, for a stream that reports
 * no usage: its output is then priced (and charged to the budget) too.
 */
function countStreamedOutput(ex: ProxyExchange, model: string | undefined): void {
  const output = createStreamOutput();
  ex.responseTaps.push((chunk) => {
    if (ex.upstream?.headers['content-encoding'] === undefined) output.push(chunk);
  });
  ex.onFinish.unshift((done) => {
    if (done.event.usage === undefined && output.text() !== '')
      done.event.streamedOutputTokens = tokenizerFor(model ?? 'unknown').countText(output.text());
  });
}

/**
 * Just before `relay`: records the upstream's answer as it is relayed and
 * stores it in the cache once it ended cleanly (a 200, the whole body; for
 * a stream, its final event and no error event).
 */
export const cacheRecordStage: ProxyStage = {
  name: 'cache-record',
  run(ex, next) {
    const plan = ex.cachePlan;
    const cache = ex.ctx.guards?.cache;
    const upstream = ex.upstream;
    if (!plan || !cache || !upstream || !ex.format || upstream.statusCode !== 200) return next();
    return record(ex, next, plan, cache, upstream);
  },
};

/** Records the answer while `next` relays it; stores it once it ended cleanly. */
async function record(
  ex: ProxyExchange,
  next: () => Promise<void>,
  plan: CachePlan,
  cache: ResponseCache,
  upstream: UpstreamResponse,
): Promise<void> {
  const recorder = createResponseRecorder({
    format: ex.format!.name,
    mode: ex.event.stream ? 'sse' : 'json',
    status: upstream.statusCode,
    headers: cacheableHeaders(upstream.headers),
    model: ex.event.model,
    maxBytes: ex.ctx.config.cacheMaxBytes,
    now: ex.ctx.now,
  });
  ex.responseTaps.push((chunk) => recorder.push(chunk));
  await next();
  if (ex.res.destroyed || ex.signal.aborted) return;
  const entry = recorder.finish();
  if (entry) await cache.set(plan.key, entry);
}

/**
 * Rate-limits `POST /v1/compress` per service key, in buckets of its own
 * (prefix `compress:`), reserving the tokens counted on `messages` (`counted`: the large-body worker counted them); the
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
  counted?: number,
): Promise<boolean> {
  const limiter = ctx.guards?.rateLimiter;
  if (!limiter) return true;
  // `counted`: the large-body worker counted them
  const tokens = counted ?? tokenizerFor(model).countMessages(messages);
  const decision = await limiter.acquire(`compress:${clientKeyHash(req, event)}`, tokens);
  if (!decision.allowed) {
    reject(event, 429, 'SVC_RATE_LIMITED', true);
    sendRateLimited(res, DEFAULT_FORMAT, decision);
    return false;
  }
  holdUntilFinished(event, { rate: decision.ticket });
  return true;
}
