import type { ShapeObservation } from './context/types.js';
import type { Deadline } from './deadline.js';
import type { EngineOptions } from './options.js';
import type { ChatMessage, Tokenizer } from './types.js';

/*
 * The hook of the context manager (`src/engine/context/`): the last pipeline
 * step. It receives the messages after per-message compression and may drop
 * whole units (a tool call with its results, a turn) only when the request is
 * over the model's context budget; it stores what it drops in `ccrEntries`
 * and inserts markers (origin -1). The default does nothing. It plugs in via
 * `EngineDeps.contextStep`, or by changing the default in `index.ts`.
 */

/** What the context step receives. */
export interface ContextStepInput {
  /** The engine's input messages, before per-message compression (what drop markers store). */
  input?: readonly ChatMessage[];
  messages: ChatMessage[];
  /** Chained hash of input messages 0..i (the pipeline's, already computed): keys cut decisions. */
  prefixKey?: (i: number) => string;
  /** Input index of each message (-1 for inserted ones). */
  origin: number[];
  tokenizer: Tokenizer;
  options: EngineOptions;
  ccrEntries: Map<string, string>;
  /** The call's time budget; a step that loops checks it between rounds. */
  deadline?: Deadline;
}

/** What the context step returns: the messages to send, their origins, its transform entries. */
export interface ContextStepResult {
  messages: ChatMessage[];
  origin: number[];
  /** `transforms_applied` entries, e.g. `context:dropped:12`. */
  transforms: string[];
  /** Input indices whose content the step replaced (compressed harder). */
  changed?: Set<number>;
  /** What TOIN should learn from this request. */
  observations?: ShapeObservation[];
}

/** The context manager's step (see the file's doc comment). */
export type ContextStep = (input: ContextStepInput) => ContextStepResult;

/** The default context step: keeps every message. */
export const keepAllMessages: ContextStep = (input) => ({
  messages: input.messages,
  origin: input.origin,
  transforms: [],
});
