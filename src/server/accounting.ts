import { compressAndStore, lazyEngine } from '../compression.js';
import { RETRIEVE_TOOL_NAME } from '../engine/markers.js';
import type { ReportedUsage, RetrievalRound } from '../events.js';
import { parseRequest } from '../formats/index.js';
import type { ParsedRequest } from '../formats/types.js';
import { requestPaths } from '../quiet.js';
import {
  CACHE_TTL_1H_MS,
  CACHE_TTL_MS,
  ConversationPrefixes,
  conversationKey,
  sumUsage,
} from '../stats/cache-aware.js';
import { hashAhead, prefixShape, type RequestShape, requestShape, toolsOf } from '../stats/prefix-shape.js';
import { compressionOf, type ProxyExchange, type ProxyStage, type ServerContext } from './context.js';
import { contextCutIn, retrievalTool } from './retrieval/tool.js';

/**
 * Accounting that happens after the response (principle 4: off the critical
 * path): retrieval rounds folded into their request, the inputs of the
 * cache-aware estimate (src/stats/cache-aware.ts) and, with `--observe`, what
 * compression would have saved. Runs as an `onFinish` hook, before the
 * `request.finished` event is emitted.
 */

/** What the retrieval loop saw of one request's upstream answers. */
interface RoundsSeen {
  /** Usage of the first answer, as the loop read it. */
  first: ReportedUsage | undefined;
  firstRead: boolean;
  continuations: RetrievalRound[];
  /** The continuation bodies, counted after the response. */
  bodies: Buffer[];
}

const rounds = new WeakMap<ProxyExchange, RoundsSeen>();

function roundsOf(ex: ProxyExchange): RoundsSeen {
  let seen = rounds.get(ex);
  if (!seen) {
    seen = { first: undefined, firstRead: false, continuations: [], bodies: [] };
    rounds.set(ex, seen);
  }
  return seen;
}

/** The retrieval loop read an upstream answer: round 0 is the first, n the n-th continuation. */
export function answerRead(ex: ProxyExchange, round: number, usage: ReportedUsage | undefined): void {
  const seen = roundsOf(ex);
  if (round === 0) {
    seen.first = usage;
    seen.firstRead = true;
  } else {
    const r = seen.continuations[round - 1];
    if (r) r.usage = usage;
  }
}

/**
 * Continuation `round` (1-based) went upstream with `body`: every upstream
 * call of a request after the first (the retrieval loop's). Its tokens are
 * counted after the response (`settle`).
 */
function continuationSent(ex: ProxyExchange, round: number, body: Buffer): void {
  const seen = roundsOf(ex);
  seen.continuations[round - 1] = { round, tokens: 0, usage: undefined };
  seen.bodies[round - 1] = body;
}

/** Tokens of a whole continuation body (messages and tools), as the proxy counts requests. */
async function bodyTokens(ex: ProxyExchange, body: Buffer | undefined): Promise<number> {
  if (!ex.format || !body) return 0;
  try {
    const parsed = parseRequest(ex.format, JSON.parse(body.toString('utf8')));
    const { tokenizerFor } = await lazyEngine.load();
    return requestShape(tokenizerFor, parsed).cumulative.at(-1) ?? 0;
  } catch {
    return 0;
  }
}

/** Per-state of one server: conversations' previous prefixes, as sent and (observe) as compressed. */
interface AccountingState {
  original: ConversationPrefixes;
  projected: ConversationPrefixes;
  /** Settles when the last exchange to take its turn has advanced its conversation (see `takeTurn`). */
  advanced: Promise<void>;
}

const states = new WeakMap<ServerContext, AccountingState>();

function stateOf(ctx: ServerContext): AccountingState {
  let s = states.get(ctx);
  if (!s) {
    s = {
      original: new ConversationPrefixes(),
      projected: new ConversationPrefixes(),
      advanced: Promise.resolve(),
    };
    states.set(ctx, s);
  }
  return s;
}

/** The cache lifetime the conversation's writes have: 1 hour when the answer wrote 1-hour entries. */
function ttlOf(usage: ReportedUsage | undefined): number {
  return (usage?.cacheWrite1h ?? 0) > 0 ? CACHE_TTL_1H_MS : CACHE_TTL_MS;
}

/** Tool definitions as compression would forward them: with svc_retrieve added where the proxy adds it. */
function forwardedTools(
  ex: ProxyExchange,
  tools: unknown[] | undefined,
  transforms: string[],
  stored: boolean,
): unknown[] | undefined {
  if (!ex.format) return tools;
  const has = tools?.some((t) => (t as { name?: unknown })?.name === RETRIEVE_TOOL_NAME) ?? false;
  if (has) return tools;
  if (Array.isArray(tools) || (contextCutIn(transforms) && stored))
    return [...(tools ?? []), retrievalTool(ex.format)];
  return tools;
}

/**
 * Takes `ex`'s turn among the exchanges to settle, now that its later stages
 * are done (its response has been written): the returned function settles
 * it, advancing its conversation after every exchange that took its turn
 * before. A turn's cached prefix is the one its previous turn left, even
 * when that turn's work after the response (its exact counts, its hashing)
 * gave way to this one's request and finished later (issue 18: a race the
 * tests met under load; the turn used to be taken only when the settling
 * began, after the other `onFinish` hooks, which a later turn could pass).
 */
function takeTurn(ex: ProxyExchange): (done: ProxyExchange) => Promise<void> {
  const state = stateOf(ex.ctx);
  const before = state.advanced;
  let advanced!: () => void;
  state.advanced = new Promise((resolve) => {
    advanced = resolve;
  });
  return async (done) => {
    try {
      await settle(done, before);
    } finally {
      advanced();
    }
  };
}

async function settle(ex: ProxyExchange, before: Promise<void>): Promise<void> {
  const { event, ctx } = ex;
  const seen = rounds.get(ex);
  const forwarded = event.tokensAfter;
  const firstUsage = seen?.firstRead ? seen.first : event.usage;
  if (seen && seen.continuations.length > 0) {
    const conts = seen.continuations.filter(Boolean);
    for (const r of conts) r.tokens = await bodyTokens(ex, seen.bodies[r.round - 1]);
    seen.bodies = [];
    const tokens = conts.reduce((n, r) => n + r.tokens, 0);
    event.retrievalRounds = conts;
    event.retrievalTokens = tokens;
    event.usage = sumUsage([seen.first, ...conts.map((r) => r.usage)]);
    event.tokensAfter += tokens;
    event.tokensSaved -= tokens;
  }
  if (event.cached || event.status >= 400 || !ex.format || ex.countsTokens) return;
  const observe = ctx.config.observe && event.upstreamStatus !== undefined;
  let parsed: ParsedRequest | undefined = ex.parsed;
  let request: RequestShape | undefined;
  if (ex.large) {
    // a body the large-body worker read: its shape came back with the compression (never parsed here);
    // --observe forwards it untouched, the worker does not compress it: no projection (docs/stats.md)
    if (observe) return;
    request = ex.large.shape;
  } else {
    if (!ex.json) return;
    if (!parsed && observe) {
      try {
        parsed = parseRequest(ex.format, ex.json);
      } catch {
        return;
      }
    }
    if (parsed && parsed.messages.length > 0) {
      // hashed a message at a time first, letting requests that arrive meanwhile go first
      await hashAhead(parsed.messages, requestPaths.pauses());
      request = requestShape((await lazyEngine.load()).tokenizerFor, parsed);
    }
  }
  if (!request || request.hashes.length === 0) return;
  const { model, first } = request;
  const shape = { hashes: request.hashes, cumulative: request.cumulative };
  const original = shape.cumulative.at(-1) ?? 0;
  const key = conversationKey(event.keyHash, model, first);
  const state = stateOf(ctx);
  await before;
  const ttl = ttlOf(firstUsage);
  const now = event.time.getTime();
  const cachedPrefix = state.original.advance(key, shape, now, ttl);
  if (!observe) {
    if (event.tokensBefore <= 0) return;
    event.counterfactual = {
      original: event.tokensBefore,
      cachedPrefix: Math.min(cachedPrefix, event.tokensBefore),
      firstUsage,
      forwarded,
    };
    return;
  }
  // --observe: what the normal run would have forwarded (compressed, svc_retrieve offered as it would be).
  if (!parsed) return;
  let output: Awaited<ReturnType<typeof compressAndStore>>;
  try {
    output = await compressAndStore(
      compressionOf(ctx),
      parsed.messages,
      model,
      parsed.maxTokens,
      event.keyHash,
    );
  } catch (err) {
    ctx.logger.debug('observe: compression failed; no projection for this request', { error: String(err) });
    return;
  }
  const r = output.result;
  const tools = toolsOf(parsed.body);
  const outTools = forwardedTools(ex, tools, r.transforms_applied, output.ccrEntries.size > 0);
  const compressed = prefixShape((await lazyEngine.load()).tokenizerFor(model), outTools, r.messages);
  const tokensAfter = compressed.cumulative.at(-1) ?? 0;
  const projectedPrefix = state.projected.advance(key, compressed, now, ttl);
  event.tokensBefore = original;
  event.tokensAfter = original;
  event.projected = { tokensAfter, tokensSaved: r.tokens_saved };
  event.counterfactual = { original, cachedPrefix, firstUsage, forwarded: original, projectedPrefix };
}

/**
 * Registers the after-response accounting of each proxied request (placed
 * right after `parse`). Nothing here runs before the response has ended; its
 * hook is added once the later stages are done, so their own `onFinish`
 * hooks (the cache storing an answer) run first and are not held up by it.
 */
export const accountingStage: ProxyStage = {
  name: 'accounting',
  run(ex, next) {
    // Nothing to account: no parse to shape (--no-optimize, a bypass, a body not of the format),
    // so no retrieval rounds either, and no --observe projection.
    if (!ex.format || (!ex.parsed && !ex.large && !ex.ctx.config.observe)) return next();
    return account(ex, next);
  },
};

/** Counts the continuations of `ex` while the later stages run; settles it once they are done. */
async function account(ex: ProxyExchange, next: () => Promise<void>): Promise<void> {
  // Every upstream call after the first is a continuation svc sent for this request (retrieval loop).
  const call = ex.callUpstream;
  let calls = 0;
  ex.callUpstream = (body, encoding) => {
    calls += 1;
    if (calls > 1 && Buffer.isBuffer(body)) continuationSent(ex, calls - 1, body);
    return call(body, encoding);
  };
  try {
    await next();
  } finally {
    const settleInTurn = takeTurn(ex);
    ex.onFinish.push(async (done) => {
      try {
        await settleInTurn(done);
      } catch (err) {
        done.ctx.logger.error('request accounting failed', { error: String(err) });
      }
    });
  }
}
