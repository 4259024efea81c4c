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
import { TextMap } from '../text-map.js';
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
      // keyed by the text itself, compared, not hashed (`TextMap`): only a duplicate needs its
      // SHA-256 (for its marker), not every output. A loop, not a callback made per request (json-walk.ts).
      const firstSeen = new TextMap<string>();
      for (let i = 0; i < env.input.length; i++) {
        const msg = env.input[i]!;
        if (msg.role !== 'tool') continue;
        const units = textUnits(msg);
        if (units.length !== 1) continue;
        const text = units[0]!.text;
        if (text.length < SMALL_OUTPUT_TOKENS * 2) continue;
        const first = firstSeen.get(text);
        if (first === undefined) {
          firstSeen.set(text, msg.tool_call_id ?? `message ${i}`);
          continue;
        }
        if (
          (env.tokenizer.atLeast?.(text) ?? env.tokenizer.countText(text)) < SMALL_OUTPUT_TOKENS &&
          env.tokenizer.countText(text) < SMALL_OUTPUT_TOKENS
        )
          continue;
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
      }
    },
  };
}

/** The dedupe step: identical outputs become markers. */
export const dedupeTransform: Transform = createDedupeTransform();

/** The dedupe step of `--lossless`: identical outputs become plain references. */
export const losslessDedupeTransform: Transform = createDedupeTransform(true);
