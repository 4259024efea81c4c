import { LRUCache } from 'lru-cache';
import { withOwnerRecords } from '../ccr/owner.js';
import { putAll } from '../ccr/store.js';
import type { Config } from '../config/options.js';
import { parseScoreWeights as parseWeights } from '../engine/context/weights.js';
import type { EngineDeps, EngineOptions } from '../engine/index.js';
import type { ChatMessage, ContentMemo, EngineOutput } from '../engine/types.js';
import { isSvcError, SvcError } from '../errors.js';
import type { ServerContext } from './context.js';

/**
 * The engine entry point as the server calls it: `compressMessages` by
 * default, injectable (`SvcServerOptions.compress`) so tests can use a
 * deterministic fake. May be async (the optional ML stage is).
 */
export type CompressFn = (
  messages: ChatMessage[],
  options: EngineOptions,
  deps?: EngineDeps,
) => EngineOutput | Promise<EngineOutput>;

let engineModule: Promise<typeof import('../engine/index.js')> | undefined;

/**
 * The real engine, imported on first use: its tokenizer tables take most of
 * svc's start-up time and memory, so `svc serve` listens first and loads the
 * engine right after (see `createSvcServer`).
 */
export const lazyEngine = {
  load: () => {
    engineModule ??= import('../engine/index.js');
    return engineModule;
  },
  compress: (async (messages, options, deps) =>
    (await lazyEngine.load()).compressMessages(messages, options, deps)) as CompressFn,
};

/** A memo of per-content engine results shared by all requests, bounded by size (principle 4). */
export function createEngineMemo(maxChars = 64 * 1024 * 1024): ContentMemo {
  return new LRUCache<string, string>({
    maxSize: maxChars,
    sizeCalculation: (v, k) => v.length + k.length + 1,
  });
}

/** Parses `--score-weights` (validated when the config was resolved). */
export function parseScoreWeights(text: string | undefined): Record<string, number> | undefined {
  return text ? parseWeights(text) : undefined;
}

/** Engine options for one request, from the server config. */
export function engineOptionsFor(
  config: Config,
  model: string,
  memo: ContentMemo,
  outputReserve?: number,
): EngineOptions {
  const options: EngineOptions = {
    model,
    memo,
    intelligentContext: config.intelligentContext,
    intelligentScoring: config.intelligentScoring,
    compressFirst: config.compressFirst,
    protectTurns: config.protectTurns,
  };
  if (config.contextLimit !== undefined) options.contextLimit = config.contextLimit;
  if (outputReserve !== undefined) options.outputReserve = outputReserve;
  const weights = parseScoreWeights(config.scoreWeights);
  if (weights) options.scoreWeights = weights;
  return options;
}

/**
 * Compresses and stores the originals of every marker in the CCR store
 * before returning (principle 3). Throws SVC_COMPRESSION_FAILED when the
 * engine throws, SVC_ENGINE_TIMEOUT when it ran past `--engine-timeout`
 * (the deadline is on `ctx.now`), SVC_STORE_UNAVAILABLE when the CCR write fails: in both
 * cases the caller must not use the compressed messages.
 */
export async function compressAndStore(
  ctx: ServerContext,
  messages: ChatMessage[],
  model: string,
  outputReserve?: number,
  owner?: string,
): Promise<EngineOutput> {
  let output: EngineOutput;
  try {
    const options = engineOptionsFor(ctx.config, model, ctx.engineMemo, outputReserve);
    if (ctx.toin) options.toin = ctx.toin.advice();
    if (ctx.config.engineTimeout > 0) options.deadline = ctx.now() + ctx.config.engineTimeout;
    output = await ctx.compress(messages, options, { clock: ctx.now });
  } catch (err) {
    if (isSvcError(err) && err.code === 'SVC_ENGINE_TIMEOUT') throw err;
    throw new SvcError('SVC_COMPRESSION_FAILED', `compression failed: ${(err as Error)?.message ?? err}`, {
      cause: err,
    });
  }
  if (output.ccrEntries.size > 0) {
    try {
      // with API keys, entries belong to the client that sent them (src/ccr/owner.ts)
      const owned = ctx.config.apiKeys.length > 0 && owner !== undefined;
      await putAll(ctx.ccr, owned ? withOwnerRecords(output.ccrEntries, owner) : output.ccrEntries);
    } catch (err) {
      throw new SvcError('SVC_STORE_UNAVAILABLE', 'could not store originals in the CCR store', {
        cause: err,
      });
    }
  }
  if (output.observations && output.observations.length > 0) {
    ctx.bus.emit('toin.observed', { time: new Date(ctx.now()), observations: output.observations });
  }
  return output;
}
