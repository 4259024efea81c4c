import { contentHash } from '../hash.js';
import { formatMarker } from '../markers.js';
import { textUnits, withTexts } from '../messages.js';
import {
  markDone,
  type PipelineEnv,
  type PipelineState,
  type TokenPair,
  type Transform,
} from '../pipeline.js';
import { SMALL_OUTPUT_TOKENS } from '../settings.js';
import type { ChatMessage } from '../types.js';

/** What a duplicate's record was: its marker, the encoding it is counted in, and the pair (counted once read). */
interface Recorded {
  marker: string;
  encoding: string;
  pair: TokenPair;
}

/** Renders the lossless reference that replaces a tool output identical to an earlier one. */
export function formatIdenticalTo(first: string): string {
  return `[svc: identical to the output of ${first} above]`;
}

/**
 * A tool output identical to an earlier tool output of the same conversation
 * becomes a marker naming that earlier call. Causal: only earlier outputs
 * count, so the first copy always stays. With `references` (`--lossless`)
 * it becomes a plain reference to that call, with no hash and no CCR entry:
 * the text is in the conversation.
 */
export function createDedupeTransform(references = false): Transform {
  /**
   * The stats' record of each duplicate by message object: a conversation
   * re-sent on every turn records its duplicates again, and their texts are
   * counted once (see `TransformLog.recordPair`), not on every turn.
   */
  const recorded = new WeakMap<ChatMessage, Recorded>();
  return {
    name: 'dedupe',
    run(state: PipelineState, env: PipelineEnv): void {
      // keyed by the text itself: a Map compares texts as V8 hashes strings (once per string), so
      // only a duplicate needs its SHA-256 (for its marker), not every output
      const firstSeen = new Map<string, string>();
      env.input.forEach((msg, i) => {
        if (msg.role !== 'tool') return;
        const units = textUnits(msg);
        if (units.length !== 1) return;
        const text = units[0]!.text;
        if (text.length < SMALL_OUTPUT_TOKENS * 2) return;
        const first = firstSeen.get(text);
        if (first === undefined) {
          firstSeen.set(text, msg.tool_call_id ?? `message ${i}`);
          return;
        }
        if (
          (env.tokenizer.atLeast?.(text) ?? env.tokenizer.countText(text)) < SMALL_OUTPUT_TOKENS &&
          env.tokenizer.countText(text) < SMALL_OUTPUT_TOKENS
        )
          return;
        const hash = contentHash(text);
        const marker = references
          ? formatIdenticalTo(first)
          : formatMarker({
              hash,
              omitted: text.length,
              unit: 'chars',
              note: `identical to the output of ${first}`,
            });
        state.messages[i] = withTexts(msg, new Map([[units[0]!.part, marker]]));
        if (!references) state.ccrEntries.set(hash, text);
        markDone(state, i, units[0]!.part);
        const { encoding } = env.tokenizer;
        let known = recorded.get(msg);
        if (known?.marker !== marker || known.encoding !== encoding) {
          known = { marker, encoding, pair: [text, marker] };
          recorded.set(msg, known);
        }
        state.log.recordPair('dedupe', 'tool', known.pair);
      });
    },
  };
}

/** The dedupe step: identical outputs become markers. */
export const dedupeTransform: Transform = createDedupeTransform();

/** The dedupe step of `--lossless`: identical outputs become plain references. */
export const losslessDedupeTransform: Transform = createDedupeTransform(true);
