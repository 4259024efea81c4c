import type { ToinAdvice } from './context/types.js';
import type { ContentMemo } from './types.js';

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
  /** What TOIN learned, as plain data: scores units and tunes keep budgets. */
  toin?: ToinAdvice;
  /**
   * Reversible transforms only (`--lossless`): no markers, no CCR entries, and
   * no context management (a request over the limit goes out as it is).
   */
  lossless?: boolean;
  /**
   * Time on `EngineDeps.clock` after which the engine gives up with
   * `EngineTimeoutError` (checked between steps); none: no limit.
   */
  deadline?: number;
}
