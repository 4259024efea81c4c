import { DIFF_CONTEXT_LINES } from '../settings.js';
import { fillSmallGaps, keepRange, renderKept } from './lines.js';
import type { CompressContext, Compressed } from './types.js';

const HEADER_RE =
  /^(?:diff --git |index |--- |\+\+\+ |new file mode|deleted file mode|similarity index|rename (?:from|to) |Binary files )/;

/**
 * Diffs: keeps file and hunk headers and every changed line, with
 * `DIFF_CONTEXT_LINES` of unchanged context around changes; text outside the
 * diff (a commit message, a summary) stays.
 */
export function compressDiff(text: string, ctx: CompressContext): Compressed {
  const lines = text.split('\n');
  const keep = new Uint8Array(lines.length);
  let inHunk = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (HEADER_RE.test(line)) {
      keep[i] = 1;
      inHunk = false;
    } else if (line.startsWith('@@')) {
      keep[i] = 1;
      inHunk = true;
    } else if (!inHunk) keep[i] = 1;
    else if (line.startsWith('+') || line.startsWith('-') || line.startsWith('\\')) {
      keepRange(keep, i - DIFF_CONTEXT_LINES, i + DIFF_CONTEXT_LINES + 1);
    }
  }
  fillSmallGaps(lines, keep);
  const out = renderKept(lines, keep, { hash: ctx.hash, note: 'unchanged context' });
  return out === null ? { text, lossy: false } : { text: out, lossy: true };
}
