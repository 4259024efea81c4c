import { collapseRepeats, markRepeatedRuns, renderKept, tidyLines } from './lines.js';
import type { CompressContext, Compressed } from './types.js';

const INNER_SPACES_RE = /(\S) {2,}(?=\S)/g;

/**
 * Prose: conservative; redundant whitespace and repeated lines go, and
 * passages already shown earlier in the conversation (instructions pasted
 * into every message) become a note. No word of a kept line is dropped.
 */
export function compressProse(text: string, ctx: CompressContext): Compressed {
  // inner runs of spaces become one (a run never spans lines, so the whole text at once)
  const spaced = text.includes('  ') ? text.replace(INNER_SPACES_RE, '$1 ') : text;
  const lines = collapseRepeats(tidyLines(spaced.split('\n')));
  const repeated = markRepeatedRuns(lines, ctx.earlierLines());
  const out = renderKept(
    lines,
    repeated.map((r) => 1 - r),
    { hash: ctx.hash, note: 'shown earlier in the conversation' },
  );
  return out === null ? { text: lines.join('\n'), lossy: false } : { text: out, lossy: true };
}
