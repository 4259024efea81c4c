/**
 * The engine's data model. The engine speaks the chat format of spec section 2
 * (`{role, content, tool_calls?, tool_call_id?}`); provider formats convert to
 * and from it in `src/formats/`.
 */

/** A text part of a message's content array. */
export interface TextPart {
  type: 'text';
  text: string;
  [extra: string]: unknown;
}

/**
 * Any other content part (images, documents, thinking blocks, ...). The engine
 * never changes a part it does not understand: it is passed through as is.
 */
export interface OpaquePart {
  type: string;
  [extra: string]: unknown;
}

export type ContentPart = TextPart | OpaquePart;

/** One tool call of an assistant message (chat-completions shape). */
export interface ToolCall {
  id: string;
  type: 'function' | string;
  function: { name: string; arguments: string };
  [extra: string]: unknown;
}

/** A chat-format message, the unit the engine reads and writes. */
export interface ChatMessage {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool' | string;
  content: string | ContentPart[] | null;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  name?: string;
  [extra: string]: unknown;
}

/** The compression result of spec section 2, plus engine-side extras. */
export interface CompressionResult {
  messages: ChatMessage[];
  tokens_before: number;
  tokens_after: number;
  tokens_saved: number;
  compression_ratio: number;
  transforms_applied: string[];
  ccr_hashes: string[];
}

/**
 * What the engine returns: the public result plus the originals that its
 * markers refer to. The caller writes `ccrEntries` to a CCR store before it
 * uses `result`; if that write fails it must use the original messages
 * instead (principle 3: never emit a marker the model cannot redeem).
 */
export interface EngineOutput {
  /** Its token counts and `transforms_applied` are counted when first read (see `compressMessages`). */
  result: CompressionResult;
  /**
   * The context step's `transforms_applied` entries (`context:drop:...`),
   * known without counting anything; absent from outputs made elsewhere.
   */
  contextTransforms?: string[];
  /** hash -> original text, for every marker in `result.messages`. */
  ccrEntries: Map<string, string>;
  /**
   * For each output message, the index of the input message it came from, or
   * -1 for a message the engine inserted (a drop marker). Identity when no
   * message was dropped.
   */
  messageOrigin: number[];
  /** Indices of input messages whose content the engine changed. */
  changed: Set<number>;
  /** What TOIN should learn from this call (compressed and dropped tool outputs). */
  observations?: ShapeObservation[];
  /**
   * Counts `result`'s tokens ahead of their first read, a message at a
   * time, awaiting what `pause` returns between messages (when it returns a
   * promise): a caller that counts after forwarding can let other requests
   * go first. Reading the counts afterwards costs lookups. Absent from
   * outputs made elsewhere; resolves at once when they were counted.
   */
  countAhead?: (pause: () => Promise<void> | undefined) => Promise<void>;
}

/** Counts tokens for one model family. Implementations memoize by content. */
export interface Tokenizer {
  /** Name of the encoding, or `estimate` for non-OpenAI models. */
  readonly encoding: string;
  /** True when counts are exact BPE counts for the model. */
  readonly exact: boolean;
  countText(text: string): number;
  /**
   * `countText`, keeping the count apart from the memo of all texts: for the
   * few texts every request sends again outside its messages (tool lists).
   */
  countKept?(text: string): number;
  countMessages(messages: readonly ChatMessage[]): number;
  /**
   * A lower bound on `countText(text)`, cheaper than counting (the exact count
   * when it is known). Decisions that hold at a bound hold at the count, so
   * they need the count only near their threshold (principle 4). With
   * `enough`, it may stop at `enough` (a bound of at least `enough` is all the
   * caller needs). Optional: a tokenizer without it is counted exactly.
   */
  atLeast?(text: string, enough?: number): number;
  /**
   * An upper bound on `countText(text)`, cheaper than counting (the exact
   * count when known; with `known` false the bound of its bytes, without
   * looking the text up: for a text just made, which is seldom counted yet).
   */
  atMost?(text: string, known?: boolean): number;
  /**
   * The pre-tokens of `text` (the encoding's split; long runs in the slices
   * they are counted in), scaled as counts are: at most `countText(text)`,
   * about twice as fast to find, and depending on the text alone (never on
   * what was counted before). A measure for decisions that need the size of
   * a text rather than its exact count. With `enough`, it may stop there
   * (and return at least `enough`). Optional: without it, those decisions
   * count exactly.
   */
  preTokens?(text: string, enough?: number): number;
  /**
   * An upper bound on `countMessages(messages)`, from `atMost` and the
   * per-message counts known. With `within`, a bound at or under it from the
   * texts' UTF-8 bytes alone is returned as it is: the counts memoized by
   * text are looked up only when that bound is above it.
   */
  countMessagesAtMost?(messages: readonly ChatMessage[], within?: number): number;
}

/** Memoization of per-content results across requests (principle 4). */
export interface ContentMemo {
  get(key: string): string | undefined;
  set(key: string, value: string): void;
}

/** One thing TOIN should learn about a tool-output shape. */
export interface ShapeObservation {
  event: 'compressed' | 'dropped';
  /** Shape key: `tool#fieldsHash`. */
  shape: string;
  tool: string;
  /** Field names (no values) of the output, for retrieval field stats. */
  fields: string[];
  /** CCR references that hold this output (so a retrieval maps back to the shape). */
  hashes: string[];
}
