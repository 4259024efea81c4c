import { lruOfEntries } from '../../lru.js';
import { COMPRESSORS, type CompressContext } from '../compressors/index.js';
import type { Deadline } from '../deadline.js';
import { contentHash } from '../hash.js';
import { formatGap, formatMarker } from '../markers.js';
import { textUnits, withTexts } from '../messages.js';
import { detectContentType } from '../router.js';
import type { ChatMessage } from '../types.js';
import { errorHits } from './factors.js';
import type { CompressHarder, HarderResult } from './types.js';

const memo = lruOfEntries<string, { text: string; hash: string } | false>(20_000);

/** Texts shorter than this are left alone by compress-harder. */
export const HARDER_MIN_CHARS = 400;

function harderText(
  text: string,
  level: number,
): { text: string; omitted: number; unit: 'lines' | 'chars' } | undefined {
  const lines = text.split('\n');
  const share = 1 / 2 ** level;
  if (lines.length >= 6) {
    const budget = Math.max(2, Math.floor(lines.length * share));
    const keep = new Uint8Array(lines.length);
    const head = Math.ceil(budget / 2);
    for (let i = 0; i < head; i += 1) keep[i] = 1;
    for (let i = lines.length - (budget - head); i < lines.length; i += 1) keep[i] = 1;
    // error lines stay: they are what the model most often needs again
    let extra = Math.ceil(budget / 2);
    for (let i = 0; i < lines.length && extra > 0; i += 1) {
      if (!keep[i] && lines[i]!.length < 500 && errorHits(lines[i]!, 1) > 0) {
        keep[i] = 1;
        extra -= 1;
      }
    }
    const out: string[] = [];
    let gap = 0;
    let omitted = 0;
    lines.forEach((line, i) => {
      if (keep[i]) {
        if (gap > 0) out.push(formatGap(gap, 'lines'));
        gap = 0;
        out.push(line);
      } else {
        gap += 1;
        omitted += 1;
      }
    });
    if (gap > 0) out.push(formatGap(gap, 'lines'));
    return omitted > 0 ? { text: out.join('\n'), omitted, unit: 'lines' } : undefined;
  }
  const keepChars = Math.floor(text.length * share);
  if (text.length < HARDER_MIN_CHARS || keepChars >= text.length) return undefined;
  const head = text.slice(0, Math.ceil(keepChars / 2));
  const tail = text.slice(text.length - Math.floor(keepChars / 2));
  return {
    text: `${head} ${formatGap(text.length - keepChars, 'chars')} ${tail}`,
    omitted: text.length - keepChars,
    unit: 'chars',
  };
}

const NOTHING: ReadonlySet<string> = new Set();
const NO_ENTITIES: ReadonlyMap<string, Record<string, unknown>> = new Map();

/**
 * The engine's own compressor for the original's content type, run with
 * every selection cap scaled by 1/2^level. It sees only the original text
 * (no earlier messages), so the answer depends on (text, level) alone.
 * Undefined when the compressor has nothing to offer or removes nothing.
 */
function recompress(source: string, hash: string, level: number): string | undefined {
  const ctx: CompressContext = {
    hash,
    userTerms: [],
    seen: NOTHING,
    earlierLines: () => NOTHING,
    earlierJson: () => NOTHING,
    earlierEntities: () => NO_ENTITIES,
    earlierLinkShapes: () => NOTHING,
    capScale: 1 / 2 ** level,
  };
  const res = COMPRESSORS[detectContentType(source)](source, ctx);
  return res?.lossy ? res.text : undefined;
}

/**
 * Compress-harder for the context manager's compress-first step. First
 * re-runs the router's compressor on the ORIGINAL text with its caps scaled
 * down (1/2^level: 0.5, 0.25, ...), whose markers name the original; only
 * when that is not smaller than the current text (the compressor cannot go
 * lower) does it fall back to a generic cut of the current text: a
 * shrinking share of its lines (head, tail and error lines) or characters
 * under one full marker. Either way the whole original goes to CCR.
 */
export function harderCompressor(
  originals: readonly ChatMessage[],
  current: readonly ChatMessage[],
  deadline?: Deadline,
): CompressHarder {
  return (index, level): HarderResult | undefined => {
    const message = current[index];
    const original = originals[index];
    if (!message || !original || message.role !== 'tool') return undefined;
    let known = resultsAt.get(message);
    if (known?.original !== original) {
      known = { original, byLevel: new Map() };
      resultsAt.set(message, known);
    }
    if (known.byLevel.has(level)) return known.byLevel.get(level);
    deadline?.check('context:harder');
    const result = harder(message, original, level);
    known.byLevel.set(level, result);
    return result;
  };
}

/**
 * Results by message object (and its original): after a cut, every later
 * turn compresses the same outputs harder again, and the proxy passes the
 * same objects, so each costs a lookup and yields the same message object
 * (whose token count is memoized too). Pure: the result depends on the two
 * texts and the level alone.
 */
const resultsAt = new WeakMap<
  ChatMessage,
  { original: ChatMessage; byLevel: Map<number, HarderResult | undefined> }
>();

function harder(message: ChatMessage, original: ChatMessage, level: number): HarderResult | undefined {
  const originalTexts = new Map(textUnits(original).map((u) => [u.part, u.text]));
  const replaced = new Map<number, string>();
  const ccrEntries = new Map<string, string>();
  for (const unit of textUnits(message)) {
    if (unit.text.length < HARDER_MIN_CHARS) continue;
    const source = originalTexts.get(unit.part) ?? unit.text;
    // Memoized: after a cut the same outputs are compressed the same way on every later turn.
    const key = `${level}:${contentHash(unit.text)}:${contentHash(source)}`;
    let done = memo.get(key);
    if (done === undefined) {
      const hash = contentHash(source);
      const again = recompress(source, hash, level);
      if (again !== undefined && again.length < unit.text.length) done = { text: again, hash };
      else {
        const cut = harderText(unit.text, level);
        done = cut
          ? { text: `${cut.text}\n${formatMarker({ hash, omitted: cut.omitted, unit: cut.unit })}`, hash }
          : false;
      }
      memo.set(key, done);
    }
    if (!done) continue;
    ccrEntries.set(done.hash, source);
    replaced.set(unit.part, done.text);
  }
  if (replaced.size === 0) return undefined;
  return { message: withTexts(message, replaced), ccrEntries, transforms: [`context:harder:${level}`] };
}
