import type { ToinAdvice } from './context/types.js';
import type { Deadline } from './deadline.js';
import type { History } from './history.js';
import type { ChatMessage, ContentMemo, Tokenizer } from './types.js';

/** Everything a transform reads and writes. Messages are replaced, never mutated in place. */
export interface PipelineState {
  /** Current messages: input objects until a transform replaces one. */
  messages: ChatMessage[];
  /** For each current message, the index of the input message it came from (-1: inserted). */
  origin: number[];
  /** Input indices whose content changed. */
  changed: Set<number>;
  /** hash -> original, for every marker in `messages`. */
  ccrEntries: Map<string, string>;
  /** Part indices (per input message) already replaced by an earlier transform. */
  done: Map<number, Set<number>>;
  readonly log: TransformLog;
}

/** What transforms may use besides the state. */
export interface PipelineEnv {
  readonly input: readonly ChatMessage[];
  readonly history: History;
  readonly tokenizer: Tokenizer;
  readonly memo: ContentMemo | undefined;
  /** What TOIN learned: scales the keep budgets of tool outputs by their shape's `keepFactor`. */
  readonly toin?: ToinAdvice | undefined;
  /** The call's time budget: checked between transforms and by long ones between their units. */
  readonly deadline?: Deadline;
}

/** A named step of the pipeline. */
export interface Transform {
  readonly name: string;
  run(state: PipelineState, env: PipelineEnv): void;
}

/** Tokens, or the text whose tokens they are (counted when the entries are read). */
export type Tokens = number | string;

/**
 * Tokens before and after one change. A pair handed to `TransformLog.recordPair`
 * has its texts replaced by their counts when the entries are read, so a
 * memoized outcome that records the same pair on every turn is counted once.
 */
export type TokenPair = [before: Tokens, after: Tokens];

/**
 * Tokens before and after per `name:kind`, rendered as `transforms_applied`
 * entries `name:kind:ratio` (ratio = after / before over the texts it changed).
 * Texts are counted only when `entries()` is called: the proxy reads them
 * after the request has been forwarded (issue 19).
 */
export class TransformLog {
  private readonly records: Array<[key: string, pair: TokenPair]> = [];
  private readonly extra: string[] = [];

  constructor(private readonly count: (text: string) => number) {}

  record(name: string, kind: string, before: Tokens, after: Tokens): void {
    this.records.push([`${name}:${kind}`, [before, after]]);
  }

  /**
   * Records `pair` itself: reading the entries writes the counts of its texts
   * into it. The caller keeps it for one tokenizer only (counts differ by
   * encoding).
   */
  recordPair(name: string, kind: string, pair: TokenPair): void {
    this.records.push([`${name}:${kind}`, pair]);
  }

  /** Adds a ready-made entry (from a transform that reports its own). */
  add(entry: string): void {
    this.extra.push(entry);
  }

  /**
   * Counts the recorded texts ahead of `entries()`, a pair at a time,
   * awaiting what `pause` returns between pairs (see `EngineOutput.countAhead`).
   */
  async countAhead(pause: () => Promise<void> | undefined): Promise<void> {
    for (const [, pair] of this.records) {
      if (typeof pair[0] !== 'string' && typeof pair[1] !== 'string') continue;
      this.counted(pair);
      const p = pause();
      if (p) await p;
    }
  }

  /** `pair` with its texts replaced by their counts (in place, so a pair kept for later turns is counted once). */
  private counted(pair: TokenPair): [number, number] {
    if (typeof pair[0] === 'string') pair[0] = this.count(pair[0]);
    if (typeof pair[1] === 'string') pair[1] = this.count(pair[1]);
    return pair as [number, number];
  }

  entries(): string[] {
    const totals = new Map<string, { before: number; after: number }>();
    for (const [key, pair] of this.records) {
      const [before, after] = this.counted(pair);
      const t = totals.get(key) ?? { before: 0, after: 0 };
      t.before += before;
      t.after += after;
      totals.set(key, t);
    }
    const out: string[] = [];
    for (const [key, t] of totals) out.push(`${key}:${(t.before === 0 ? 1 : t.after / t.before).toFixed(2)}`);
    return [...out, ...this.extra];
  }
}

/** Runs transforms in order on a fresh state. */
export function runPipeline(transforms: readonly Transform[], env: PipelineEnv): PipelineState {
  const state: PipelineState = {
    messages: [...env.input],
    origin: env.input.map((_, i) => i),
    changed: new Set(),
    ccrEntries: new Map(),
    done: new Map(),
    log: new TransformLog((text) => env.tokenizer.countText(text)),
  };
  for (const t of transforms) {
    env.deadline?.check(t.name);
    t.run(state, env);
  }
  return state;
}

/** Records that a transform replaced part `part` of input message `index`. */
export function markDone(state: PipelineState, index: number, part: number): void {
  let parts = state.done.get(index);
  if (!parts) {
    parts = new Set();
    state.done.set(index, parts);
  }
  parts.add(part);
  state.changed.add(index);
}
