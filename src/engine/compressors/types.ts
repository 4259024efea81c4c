import type { KnownLines, KnownNames } from '../known.js';

/** Content types the router tells apart; one compressor each. */
export type ContentType = 'json' | 'log' | 'search' | 'diff' | 'table' | 'text' | 'code' | 'html' | 'prose';

/** What a compressor may know besides the text itself: only earlier messages (principle 2). */
export interface CompressContext {
  /** `contentHash` of the original text; markers name it. */
  readonly hash: string;
  /** Terms of the most recent user message before this content. */
  readonly userTerms: readonly string[];
  /** Identifiers that occurred in the conversation before this content. */
  readonly seen: KnownNames;
  /** Lines of earlier messages, keyed by `lineKey`; computed on demand. */
  earlierLines(): KnownLines;
  /** Hashes of the JSON objects and arrays in earlier tool outputs (see `json-subtrees.ts`); computed on demand. */
  earlierJson(): ReadonlySet<string>;
  /** Entities of the JSON in earlier tool outputs (see `json-entities.ts`); computed on demand. */
  earlierEntities(): ReadonlyMap<string, Record<string, unknown>>;
  /** Shapes of objects with derived links in earlier tool outputs (see `json-links.ts`). */
  earlierLinkShapes(): ReadonlySet<string>;
  /**
   * Set by the router: the model has not seen this text yet. File reads and
   * path listings then stay lossless (`compressRead`). Unset when the context
   * manager compresses an output harder near the model's limit.
   */
  readonly firstSight?: boolean;
  /** Factor on every selection cap (absent = 1): compress-harder passes 0.5, 0.25, ...; TOIN its keep factor (0.66-2). */
  readonly capScale?: number;
}

/** A compressor's answer. */
export interface Compressed {
  text: string;
  /** True when content was removed: the original then goes to the CCR store. */
  lossy: boolean;
}

/** Compresses one text of a known type; null when it has nothing to offer. */
export type Compressor = (text: string, ctx: CompressContext) => Compressed | null;
