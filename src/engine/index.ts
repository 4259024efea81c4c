import { tokenizerFor } from './tokens.js';
import type { ChatMessage, ContentMemo, EngineOutput, Tokenizer } from './types.js';

export * from './types.js';

/** Options of one engine call. Every field is plain data (principle 2). */
export interface EngineOptions {
  /** Model name; decides the tokenizer and the context limit. */
  model: string;
  /**
   * Memo of per-content results, shared across requests by the proxy
   * (bounded by the caller). Content compressed once is then compressed the
   * same way on later turns (principle 4).
   */
  memo?: ContentMemo;
  /** Context limit in tokens; default from the model table. */
  contextLimit?: number;
  /** Tokens reserved for the answer (the request's max_tokens). */
  outputReserve?: number;
  intelligentContext?: boolean;
  intelligentScoring?: boolean;
  compressFirst?: boolean;
  protectTurns?: number;
  /** `recency=1,similarity=1,...` as parsed weights. */
  scoreWeights?: Record<string, number>;
}

export interface EngineDeps {
  tokenizer?: Tokenizer;
}

/**
 * Compresses chat messages. Pure: no I/O, no clock, no randomness.
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
  const tokenizer = deps.tokenizer ?? tokenizerFor(options.model);
  const tokens = tokenizer.countMessages(messages);
  return {
    result: {
      messages,
      tokens_before: tokens,
      tokens_after: tokens,
      tokens_saved: 0,
      compression_ratio: 1,
      transforms_applied: [],
      ccr_hashes: [],
    },
    ccrEntries: new Map(),
    messageOrigin: messages.map((_, i) => i),
    changed: new Set(),
  };
}
