import { collapseRepeats, tidyLines } from './lines.js';
import { isNumberedListing, unpadListing } from './listing.js';
import type { CompressContext, Compressed } from './types.js';

/**
 * Source code: conservative and lossless. Trailing whitespace and runs of
 * blank lines go, line-number padding of listings goes, runs of identical
 * lines collapse to a count; no line is dropped.
 */
export function compressCode(text: string, _ctx: CompressContext): Compressed {
  let lines = text.split('\n');
  if (isNumberedListing(lines)) lines = unpadListing(lines);
  return { text: collapseRepeats(tidyLines(lines)).join('\n'), lossy: false };
}
