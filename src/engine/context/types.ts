/**
 * Types of the context manager: units, scoring, TOIN advice and the
 * "compress harder" callback. Plain data only (the engine is pure).
 */
import type { ChatMessage, ContentMemo, ShapeObservation, Tokenizer } from '../types.js';

export type { ShapeObservation } from '../types.js';

/** What a unit holds; decides how it is summarised in a drop marker. */
export type UnitKind = 'system' | 'tool' | 'turn' | 'single';

/**
 * A run of consecutive messages that is kept or dropped as a whole: an
 * assistant tool call with all its results (and any user text sent in the
 * same provider message), a user message with the assistant answer that
 * follows it, or a single message.
 */
export interface ContextUnit {
  /** Position among all units, 0 = oldest. */
  index: number;
  /** First message index (inclusive). */
  start: number;
  /** Last message index (exclusive). */
  end: number;
  kind: UnitKind;
  /** Never dropped: system prompt, the latest user message, the last N turns. */
  protected: boolean;
}

/** Names of the scoring factors, as used in `--score-weights`. */
export type ScoreFactor = 'recency' | 'similarity' | 'toin' | 'errors' | 'references';

/** Weight per factor; missing factors take their default weight. */
export type ScoreWeights = Record<ScoreFactor, number>;

/** TOIN's view of one tool-output shape, as plain data. */
export interface ShapeAdvice {
  /** 0..1; 0.5 is neutral. Often-retrieved shapes score higher. */
  importance: number;
  /**
   * Multiplier for the per-message compressors' keep budgets: above 1 keep
   * more (often retrieved), below 1 compress harder (never retrieved).
   */
  keepFactor: number;
}

/** Advice TOIN hands to the engine: shape key -> advice. */
export interface ToinAdvice {
  shapes: Record<string, ShapeAdvice>;
}

/** What the compress-harder callback returns for one message. */
export interface HarderResult {
  message: ChatMessage;
  /** Originals for every marker the harder compression put in `message`. */
  ccrEntries: Map<string, string>;
  /** transforms_applied entries of the harder compression. */
  transforms: string[];
}

/**
 * Compresses input message `index` again with lower keep budgets. `level`
 * counts up from 1 (each level keeps about half of the previous one). Must be
 * deterministic in (message, level). Returns undefined when the message
 * cannot be made smaller at that level.
 */
export type CompressHarder = (index: number, level: number) => HarderResult | undefined;

/** Inputs of `fitToContext`. */
export interface FitOptions {
  /** Context limit of the model in tokens. Undefined: unknown, nothing is dropped. */
  contextLimit: number | undefined;
  /** Tokens reserved for the answer. */
  outputReserve: number;
  /** false: the legacy rolling window. Default true. */
  intelligentContext?: boolean;
  /** false: position-based scores. Default true. */
  intelligentScoring?: boolean;
  /** false: skip compressing harder before dropping. Default true. */
  compressFirst?: boolean;
  /** Last N turns never dropped. Default 4. */
  protectTurns?: number;
  scoreWeights?: Partial<ScoreWeights>;
  toin?: ToinAdvice;
  /** Cut decisions of earlier turns, so a cut conversation stays stable. */
  memo?: ContentMemo;
}

/** Dependencies of `fitToContext`. */
export interface FitDeps {
  tokenizer: Tokenizer;
  /** Unset or undefined result: the compress-first step is skipped. */
  compressHarder?: CompressHarder;
  /**
   * Messages as they came in, before per-message compression; what a drop
   * marker stores in CCR. Default: the messages given.
   */
  originals?: readonly ChatMessage[];
  /** Chained hash of messages 0..i, when the caller has it (else computed here). */
  prefixKey?: (i: number) => string;
}

/** Result of `fitToContext`. */
export interface FitResult {
  messages: ChatMessage[];
  /** Input index of each output message; -1 for an inserted drop marker. */
  messageOrigin: number[];
  /** Input indices whose content was replaced (compressed harder). */
  changed: Set<number>;
  ccrEntries: Map<string, string>;
  transforms: string[];
  observations: ShapeObservation[];
  /** Input indices that were dropped. */
  dropped: number[];
  /** Token count of the result. */
  tokens: number;
  /** Budget the result had to fit (limit - reserve), when known. */
  budget: number | undefined;
}
