import { LRUCache } from 'lru-cache';
import { withOwnerRecords } from './ccr/owner.js';
import { type CcrStore, putAll } from './ccr/store.js';
import type { Config } from './config/options.js';
import type { ToinAdvice } from './engine/context/types.js';
import { parseScoreWeights } from './engine/context/weights.js';
import type { EngineDeps, EngineOptions } from './engine/index.js';
import { ENTRY_OVERHEAD, stringBytes } from './engine/memo-budget.js';
import type { ChatMessage, ContentMemo, EngineOutput } from './engine/types.js';
import { isSvcError, SvcError } from './errors.js';

/**
 * The one engine call of svc: `svc compress`, `POST /v1/compress` and the
 * proxy all compress through `compressAndStore` (engine options from the
 * config, the per-content memo, TOIN's advice, the originals stored before
 * the output is used).
 */

/**
 * The engine entry point: `compressMessages` by default, injectable
 * (`SvcServerOptions.compress`, `svc compress` tests) so tests can use a
 * deterministic fake. May be async (the optional ML stage is).
 */
export type CompressFn = (
  messages: ChatMessage[],
  options: EngineOptions,
  deps?: EngineDeps,
) => EngineOutput | Promise<EngineOutput>;

let engineModule: Promise<typeof import('./engine/index.js')> | undefined;

/**
 * The real engine, imported on first use (the first request that compresses),
 * so `svc serve` is ready and small before any work arrives (issue 19).
 */
export const lazyEngine = {
  load: () => {
    engineModule ??= import('./engine/index.js');
    return engineModule;
  },
  compress: (async (messages, options, deps) =>
    (await lazyEngine.load()).compressMessages(messages, options, deps)) as CompressFn,
};

/**
 * Tokens of a piece of request text outside the messages (tool definitions,
 * the inserted svc_retrieve tool), with the engine's tokenizer for `model`
 * (kept by text apart from the count memo: a tool list re-sent every turn
 * is counted once).
 */
export async function countRequestText(model: string, text: string): Promise<number> {
  if (text === '') return 0;
  const tokenizer = (await lazyEngine.load()).tokenizerFor(model);
  return tokenizer.countKept ? tokenizer.countKept(text) : tokenizer.countText(text);
}

/** Tokens of a request's messages, as the engine counts them (`tokens_before`), with its tokenizer for `model`. */
export async function countRequestMessages(model: string, messages: ChatMessage[]): Promise<number> {
  return (await lazyEngine.load()).tokenizerFor(model).countMessages(messages);
}

/**
 * A memo of per-content engine results shared by all requests, bounded by
 * their estimated bytes (keys and results as V8 stores them, and the
 * entries; principle 4).
 */
export function createEngineMemo(maxBytes = 64 * 1024 * 1024): ContentMemo {
  return new LRUCache<string, string>({
    maxSize: maxBytes,
    sizeCalculation: (v, k) => stringBytes(v) + stringBytes(k) + ENTRY_OVERHEAD,
  });
}

/** Engine options for one request, from the server config. */
export function engineOptionsFor(
  config: Config,
  model: string,
  memo?: ContentMemo,
  outputReserve?: number,
): EngineOptions {
  const options: EngineOptions = {
    model,
    intelligentContext: config.intelligentContext,
    intelligentScoring: config.intelligentScoring,
    compressFirst: config.compressFirst,
    lossless: config.lossless,
    protectTurns: config.protectTurns,
  };
  if (memo) options.memo = memo;
  if (config.contextLimit !== undefined) options.contextLimit = config.contextLimit;
  if (outputReserve !== undefined) options.outputReserve = outputReserve;
  // Validated when the config was resolved.
  if (config.scoreWeights) options.scoreWeights = parseScoreWeights(config.scoreWeights);
  return options;
}

/** What one engine call needs from its caller (the server's context, or `svc compress`). */
export interface Compression {
  config: Config;
  compress: CompressFn;
  /** The CCR store, or how to open it (`svc compress` opens its file store only when something was removed). */
  ccr: CcrStore | (() => CcrStore);
  /** Per-content memo (the server shares one across requests). */
  memo?: ContentMemo | undefined;
  /** TOIN's advice at the time of the call. */
  toin?: (() => ToinAdvice) | undefined;
  /** Receives what the engine observed for TOIN. */
  observed?: ((observations: NonNullable<EngineOutput['observations']>) => void) | undefined;
  /** The clock of `--engine-timeout`'s deadline (the server's `now`); default `Date.now`. */
  now?: (() => number) | undefined;
}

/**
 * The engine's output for a messages array, with what else it was computed
 * from. The proxy reads a body sent again as the very same messages array
 * (its body parser and `parseRequest` give the same objects), and the engine
 * is pure: the same messages, options and TOIN advice (a new advice object
 * whenever TOIN learned something) give the same output, so a memoized turn
 * gets it without a pass over the conversation (principle 4). Outputs are
 * never modified; the originals are stored again on every call.
 */
const outputs = new WeakMap<ChatMessage[], { inputs: unknown[]; output: EngineOutput }>();

function sameInputs(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/**
 * Compresses and stores the originals of every marker in the CCR store
 * before returning (principle 3). Throws SVC_COMPRESSION_FAILED when the
 * engine throws, SVC_ENGINE_TIMEOUT when it ran past `--engine-timeout`,
 * SVC_STORE_UNAVAILABLE (with the store's error as `cause`
 * and `details.tokensBefore`) when the CCR write fails: in both cases the caller must not use the
 * compressed messages.
 */
export async function compressAndStore(
  c: Compression,
  messages: ChatMessage[],
  model: string,
  outputReserve?: number,
  owner?: string,
): Promise<EngineOutput> {
  let output: EngineOutput;
  try {
    const toin = c.toin?.();
    const inputs = [c.compress, c.config, c.memo, model, outputReserve, toin];
    const known = outputs.get(messages);
    if (known && sameInputs(known.inputs, inputs)) output = known.output;
    else {
      const options = engineOptionsFor(c.config, model, c.memo, outputReserve);
      if (toin) options.toin = toin;
      const clock = c.now ?? Date.now;
      if (c.config.engineTimeout > 0) options.deadline = clock() + c.config.engineTimeout;
      output = await c.compress(messages, options, { clock });
      outputs.set(messages, { inputs, output });
    }
  } catch (err) {
    if (isSvcError(err) && err.code === 'SVC_ENGINE_TIMEOUT') throw err;
    throw new SvcError('SVC_COMPRESSION_FAILED', `compression failed: ${(err as Error)?.message ?? err}`, {
      cause: err,
    });
  }
  if (output.ccrEntries.size > 0) {
    try {
      // with API keys, entries belong to the client that sent them (src/ccr/owner.ts)
      const owned = c.config.apiKeys.length > 0 && owner !== undefined;
      const entries = owned ? withOwnerRecords(output.ccrEntries, owner) : output.ccrEntries;
      await putAll(typeof c.ccr === 'function' ? c.ccr() : c.ccr, entries);
    } catch (err) {
      throw new SvcError('SVC_STORE_UNAVAILABLE', 'could not store originals in the CCR store', {
        cause: err,
        details: { tokensBefore: output.result.tokens_before },
      });
    }
  }
  if (output.observations && output.observations.length > 0) c.observed?.(output.observations);
  return output;
}
