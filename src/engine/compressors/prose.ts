import { collapseRepeats, tidyLines } from './lines.js';
import type { CompressContext, Compressed } from './types.js';

/** Prose: conservative and lossless; redundant whitespace and repeated lines only, no word dropped. */
export function compressProse(text: string, _ctx: CompressContext): Compressed {
  const lines = text.split('\n').map((l) => l.replace(/(\S) {2,}(?=\S)/g, '$1 '));
  return { text: collapseRepeats(tidyLines(lines)).join('\n'), lossy: false };
}
