import { beginCall, endCall } from './call-scope.js';
import { intelligentContextStep } from './context/step.js';
import { type ContextStep, keepAllMessages } from './context-hook.js';
import { deadlineOf } from './deadline.js';
import { History } from './history.js';
import type { EngineOptions } from './options.js';
import { type PipelineEnv, runPipeline, type Transform } from './pipeline.js';
import { tokenizerFor } from './tokens.js';

export { tokenizerFor } from './tokens.js';

import { dedupeTransform, losslessDedupeTransform } from './transforms/dedupe.js';
import { losslessRouteTransform, routeTransform } from './transforms/route.js';
import type { ChatMessage, CompressionResult, EngineOutput, Tokenizer } from './types.js';

export type { ContextStep, ContextStepInput, ContextStepResult } from './context-hook.js';
export { EngineTimeoutError } from './deadline.js';
export type { EngineOptions } from './options.js';
export * from './types.js';

/** What the engine receives from outside instead of reaching for it (STYLE.md: the engine is pure). */
export interface EngineDeps {
  tokenizer?: Tokenizer;
  /** The context manager's step (see `context-hook.ts`); default `intelligentContextStep`. */
  contextStep?: ContextStep;
  /** Milliseconds on some clock (e.g. `performance.now`): what `EngineOptions.deadline` is measured on. */
  clock?: () => number;
}

/**
 * The per-message transforms, in their fixed order: duplicate tool outputs
 * become references, then the content router compresses each remaining text.
 * The context step runs after them.
 */
export const TRANSFORMS: readonly Transform[] = [dedupeTransform, routeTransform];

/** The transforms of `--lossless`. */
export const LOSSLESS_TRANSFORMS: readonly Transform[] = [losslessDedupeTransform, losslessRouteTransform];

/** `--lossless` drops and cuts nothing: its context step keeps every message. */
const LOSSLESS_CONTEXT_STEP: ContextStep = keepAllMessages;

/** The context step used when `deps` names none; the context manager replaces it here. */
const DEFAULT_CONTEXT_STEP: ContextStep = intelligentContextStep;

/**
 * A result whose token counts (and `transforms_applied`, which carries
 * ratios) are counted the first time one is read, once: the proxy forwards
 * the request before it reads them, so counting new content never delays it
 * (issue 19); `svc compress` and `POST /v1/compress` read them at once.
 * Enumerable getters, so a spread or `JSON.stringify` sees plain fields, in
 * the documented order.
 */
function withCounts(
  messages: ChatMessage[],
  ccrHashes: string[],
  count: () => { before: number; after: number; transforms: string[] },
): CompressionResult {
  let counts: ReturnType<typeof count> | undefined;
  const counted = () => (counts ??= count());
  const lazy = (get: () => unknown): PropertyDescriptor => ({ enumerable: true, get });
  return Object.defineProperties({} as CompressionResult, {
    messages: { enumerable: true, writable: true, value: messages },
    tokens_before: lazy(() => counted().before),
    tokens_after: lazy(() => counted().after),
    tokens_saved: lazy(() => counted().before - counted().after),
    compression_ratio: lazy(() => (counted().before === 0 ? 1 : counted().after / counted().before)),
    transforms_applied: lazy(() => counted().transforms),
    ccr_hashes: { enumerable: true, writable: true, value: ccrHashes },
  });
}

/**
 * Compresses chat messages. Pure: no I/O, no clock, no randomness. How
 * message i is compressed depends only on messages 0..i (principle 2).
 *
 * @example
 * const { result, ccrEntries } = compressMessages(messages, { model: 'gpt-4o' });
 * await putAll(ccrStore, ccrEntries); // before using result.messages
 */
export function compressMessages(
  messages: ChatMessage[],
  options: EngineOptions,
  deps: EngineDeps = {},
): EngineOutput {
  beginCall();
  try {
    return compressInCall(messages, options, deps);
  } finally {
    endCall();
  }
}

function compressInCall(messages: ChatMessage[], options: EngineOptions, deps: EngineDeps): EngineOutput {
  const tokenizer = deps.tokenizer ?? tokenizerFor(options.model);
  const deadline = deadlineOf(options.deadline, deps.clock);
  const env: PipelineEnv = {
    deadline,
    input: messages,
    history: new History(messages, options.memo !== undefined),
    tokenizer,
    memo: options.memo,
    toin: options.toin,
  };
  let state: ReturnType<typeof runPipeline>;
  try {
    state = runPipeline(options.lossless ? LOSSLESS_TRANSFORMS : TRANSFORMS, env);
  } finally {
    // the transforms are what extends the history's scans
    env.history.leaveScans();
  }
  const step = options.lossless ? LOSSLESS_CONTEXT_STEP : (deps.contextStep ?? DEFAULT_CONTEXT_STEP);
  deadline.check('context');
  const ctx = step({
    input: messages,
    prefixKey: (i) => env.history.prefixKey(i),
    messages: state.messages,
    origin: state.origin,
    tokenizer,
    options,
    ccrEntries: state.ccrEntries,
    deadline,
  });
  deadline.check('count');
  for (const entry of ctx.transforms) state.log.add(entry);
  for (const i of ctx.changed ?? []) state.changed.add(i);
  const unchanged = state.changed.size === 0 && ctx.messages === state.messages;
  const result = withCounts(ctx.messages, [...state.ccrEntries.keys()], () => {
    const before = tokenizer.countMessages(messages);
    const after = unchanged ? before : tokenizer.countMessages(ctx.messages);
    return { before, after, transforms: state.log.entries() };
  });
  let countedAhead = false;
  return {
    result,
    countAhead: async (pause) => {
      if (countedAhead) return;
      countedAhead = true;
      // the tokenizer keeps each message's count (by message object), so the counts read later are lookups
      const one: ChatMessage[] = [];
      for (const list of unchanged ? [messages] : [messages, ctx.messages])
        for (const msg of list) {
          one[0] = msg;
          tokenizer.countMessages(one);
          const p = pause();
          if (p) await p;
        }
      await state.log.countAhead(pause);
    },
    contextTransforms: ctx.transforms,
    ccrEntries: state.ccrEntries,
    messageOrigin: ctx.origin,
    changed: state.changed,
    observations: ctx.observations ?? [],
  };
}
