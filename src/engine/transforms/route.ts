import {
  COMPRESSORS,
  type CompressContext,
  type Compressed,
  type ContentType,
} from '../compressors/index.js';
import { contentHash } from '../hash.js';
import { isCompressible, textUnits, withTexts } from '../messages.js';
import { markDone, type PipelineEnv, type PipelineState, type Transform } from '../pipeline.js';
import { detectContentType } from '../router.js';
import { ENGINE_VERSION, MIN_SAVED_TOKENS, MIN_SAVINGS_RATIO, SMALL_OUTPUT_TOKENS } from '../settings.js';

interface UnitResult {
  type: ContentType;
  /** Compressed text, or null when the original stays. */
  text: string | null;
  lossy: boolean;
}

/** True when a compressed form saves enough to be worth using. */
export function worthIt(before: number, after: number): boolean {
  return before - after >= Math.max(MIN_SAVED_TOKENS, before * MIN_SAVINGS_RATIO);
}

function compressUnit(
  text: string,
  before: number,
  ctx: CompressContext,
  countText: (t: string) => number,
): UnitResult {
  const type = detectContentType(text);
  const res: Compressed | null = COMPRESSORS[type](text, ctx);
  if (!res || !worthIt(before, countText(res.text))) return { type, text: null, lossy: false };
  return { type, text: res.text, lossy: res.lossy };
}

/**
 * The content router: each compressible text of at least
 * `SMALL_OUTPUT_TOKENS` goes to the compressor of its content type; the
 * result is used only when `worthIt`. Results are memoized per message prefix
 * (the only thing they depend on), so a conversation re-sent on each turn is
 * compressed once per new message.
 */
export const routeTransform: Transform = {
  name: 'router',
  run(state: PipelineState, env: PipelineEnv): void {
    const { tokenizer, history, memo } = env;
    const countText = (t: string) => tokenizer.countText(t);
    env.input.forEach((msg, i) => {
      if (!isCompressible(msg, i, env.lastUser)) return;
      const replaced = new Map<number, string>();
      for (const unit of textUnits(msg)) {
        if (state.done.get(i)?.has(unit.part)) continue;
        if (unit.text.length < SMALL_OUTPUT_TOKENS) continue;
        const before = countText(unit.text);
        if (before < SMALL_OUTPUT_TOKENS) continue;
        const key = memo
          ? `svc-router:${ENGINE_VERSION}:${tokenizer.encoding}:${history.prefixKey(i)}:${unit.part}`
          : '';
        let result: UnitResult | undefined;
        const cached = memo?.get(key);
        if (cached !== undefined) result = JSON.parse(cached) as UnitResult;
        const hash = contentHash(unit.text);
        if (!result) {
          const ctx: CompressContext = {
            hash,
            userTerms: history.userTermsBefore(i),
            seen: history.seenBefore(i),
            earlierJson: () => history.jsonSubtreesBefore(i),
            earlierEntities: () => history.jsonEntitiesBefore(i),
            earlierLinkShapes: () => history.jsonLinkShapesBefore(i),
            earlierLines: () => history.linesBefore(i),
          };
          result = compressUnit(unit.text, before, ctx, countText);
          memo?.set(key, JSON.stringify(result));
        }
        if (result.text === null) continue;
        replaced.set(unit.part, result.text);
        if (result.lossy) state.ccrEntries.set(hash, unit.text);
        markDone(state, i, unit.part);
        state.log.record('router', result.type, before, countText(result.text));
      }
      if (replaced.size > 0) state.messages[i] = withTexts(state.messages[i]!, replaced);
    });
  },
};
