import type { ContextStep, ContextStepInput, ContextStepResult } from '../context-hook.js';
import type { ChatMessage } from '../types.js';
import { harderCompressor } from './harder.js';
import { contextLimitFor, DEFAULT_OUTPUT_RESERVE } from './limits.js';
import { fitToContext } from './manager.js';
import { observeCompressed } from './observe.js';

/**
 * The engine's context step: `fitToContext` with the model's limit (or
 * `contextLimit`), the request's output reserve, the three mode switches,
 * the score weights, TOIN advice, and the generic compress-harder. Also
 * reports TOIN observations of the per-message compression.
 */
export const intelligentContextStep: ContextStep = (input: ContextStepInput): ContextStepResult => {
  const { options } = input;
  const given = input.input ?? input.messages;
  // originals aligned with the current messages (inserted ones stand for themselves)
  const originals: ChatMessage[] = [];
  for (let k = 0; k < input.messages.length; k++) {
    const m = input.messages[k]!;
    const i = input.origin[k] ?? -1;
    originals.push(i >= 0 ? (given[i] ?? m) : m);
  }
  const aligned = input.origin.length === given.length && isIdentity(input.origin);
  const observations = observeCompressed(given, input.messages, input.origin);
  const fit = fitToContext(
    input.messages,
    {
      contextLimit: options.contextLimit ?? contextLimitFor(options.model),
      outputReserve: options.outputReserve ?? DEFAULT_OUTPUT_RESERVE,
      intelligentContext: options.intelligentContext,
      intelligentScoring: options.intelligentScoring,
      compressFirst: options.compressFirst,
      protectTurns: options.protectTurns,
      scoreWeights: options.scoreWeights,
      toin: options.toin,
      memo: options.memo,
    },
    {
      tokenizer: input.tokenizer,
      originals,
      compressHarder: harderCompressor(originals, input.messages, input.deadline),
      ...(input.prefixKey && aligned ? { prefixKey: input.prefixKey } : {}),
    },
  );
  if (fit.dropped.length === 0 && fit.changed.size === 0) {
    return { messages: input.messages, origin: input.origin, transforms: fit.transforms, observations };
  }
  for (const [hash, original] of fit.ccrEntries) input.ccrEntries.set(hash, original);
  const mapOrigin = (k: number) => (k < 0 ? -1 : (input.origin[k] ?? -1));
  return {
    messages: fit.messages,
    origin: fit.messageOrigin.map(mapOrigin),
    transforms: fit.transforms,
    changed: new Set([...fit.changed].map(mapOrigin).filter((i) => i >= 0)),
    observations: [...observations, ...fit.observations],
  };
};

/** True when every message stands where it came from (`origin[k] === k`). */
function isIdentity(origin: readonly number[]): boolean {
  for (let k = 0; k < origin.length; k++) if (origin[k] !== k) return false;
  return true;
}
