import { LRUCache } from 'lru-cache';
import { contentHash } from '../hash.js';
import { formatGap, formatMarker } from '../markers.js';
import { textUnits, withTexts } from '../messages.js';
import type { ChatMessage } from '../types.js';
import { errorHits } from './factors.js';
import type { CompressHarder, HarderResult } from './types.js';

const memo = new LRUCache<string, { text: string; hash: string } | false>({ max: 20_000 });

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

/**
 * Compress-harder for the context manager's compress-first step: keeps a
 * shrinking share of a tool output's lines (1/2^level: head, tail and error
 * lines) or characters, and stores the whole original in CCR under one full
 * marker. Works on the already-compressed text, so it only ever removes
 * more; the marker always names the original.
 */
export function harderCompressor(
  originals: readonly ChatMessage[],
  current: readonly ChatMessage[],
): CompressHarder {
  return (index, level): HarderResult | undefined => {
    const message = current[index];
    const original = originals[index];
    if (!message || !original || message.role !== 'tool') return undefined;
    const originalTexts = new Map(textUnits(original).map((u) => [u.part, u.text]));
    const replaced = new Map<number, string>();
    const ccrEntries = new Map<string, string>();
    for (const unit of textUnits(message)) {
      if (unit.text.length < HARDER_MIN_CHARS) continue;
      const source = originalTexts.get(unit.part) ?? unit.text;
      // Memoized: after a cut the same outputs are compressed the same way on every later turn.
      const key = `${level}:${contentHash(unit.text)}:${source === unit.text ? '=' : source.length}`;
      let done = memo.get(key);
      if (done === undefined) {
        const cut = harderText(unit.text, level);
        const hash = contentHash(source);
        done = cut
          ? { text: `${cut.text}\n${formatMarker({ hash, omitted: cut.omitted, unit: cut.unit })}`, hash }
          : false;
        memo.set(key, done);
      }
      if (!done) continue;
      ccrEntries.set(done.hash, source);
      replaced.set(unit.part, done.text);
    }
    if (replaced.size === 0) return undefined;
    return { message: withTexts(message, replaced), ccrEntries, transforms: [`context:harder:${level}`] };
  };
}
