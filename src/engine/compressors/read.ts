import { collapseRepeats, markRepeatedRuns, renderKept, tidyLines, trimTrailingBlanks } from './lines.js';
import { numberedMatches, numberedNonBlank, unpadListing } from './listing.js';
import type { CompressContext, Compressed } from './types.js';

/**
 * File reads (an agent's Read tool, `cat`, `sed -n`, editor windows) and
 * path listings: what an agent acts on next (an edit's `old_string` is copied
 * from the read, the path opened next from the listing), so they are never
 * cut at first sight. Only reversible steps apply:
 *
 * - line numbers of a numbered listing (`     12→x`, `cat -n`) lose their
 *   padding, and within a run of consecutive numbers only every
 *   `NUMBER_EVERY`th line (and the first line of each run) keeps its number;
 *   a note above the listing says so, and every number can be rebuilt by
 *   counting (blank lines are kept for that);
 * - trailing whitespace goes; 3+ identical lines become one line and a repeat
 *   note (it counts the lines it stands for);
 * - runs of lines the conversation already holds (a file read again, a file
 *   the agent wrote itself) become a marker naming the hash of this output;
 *   the exact text is both earlier in the conversation and retrievable.
 */

/** In a run of consecutive numbered lines, every this-many-th line keeps its number. */
export const NUMBER_EVERY = 10;
/** Listings shorter than this keep every number (the note would cost more than it saves). */
const MIN_THINNED_LINES = 20;
/** The note above a listing whose numbers were thinned. */
export const THINNED_NOTE = `[svc: line numbers on every ${NUMBER_EVERY}th line and after gaps only]`;

/**
 * Lossless: unpads the numbers of a numbered listing and, in runs of
 * consecutive numbers, keeps the number only on the first line of the run and
 * on every `NUMBER_EVERY`th line. `keep` (optional) marks the lines that will
 * be shown: a line after a hidden one starts a new run. Returns the lines to
 * show and whether any number was dropped.
 */
export function thinNumbers(
  lines: readonly string[],
  keep?: Uint8Array,
): { lines: string[]; thinned: boolean } {
  const matches = lines.length < MIN_THINNED_LINES ? null : numberedMatches(lines);
  if (!matches) return { lines: unpadListing(lines), thinned: false };
  let prev = -2;
  let thinned = false;
  const out = lines.map((line, i) => {
    const m = matches[i];
    const shown = !keep || keep[i] === 1;
    if (!m || !shown) {
      prev = -2;
      return line;
    }
    const n = Number(m[1]);
    const inRun = n === prev + 1;
    prev = n;
    if (inRun && n % NUMBER_EVERY !== 0) {
      thinned = true;
      return m[3]!;
    }
    // the line from its number on (the match is the whole line): one slice, not three joined
    return line.slice(line.length - m[1]!.length - m[2]!.length - m[3]!.length);
  });
  return { lines: out, thinned };
}

/** 1 for 0 and 0 for 1 (a module function, not a closure made per call: see json-walk.ts). */
function negated(r: number): number {
  return 1 - r;
}

/** Trailing whitespace only (blank lines stay: in a listing they carry line numbers). */
function trimEnds(lines: readonly string[]): string[] {
  return lines.map(trimTrailingBlanks);
}

/**
 * A file read or path listing at first sight: reversible steps only (see
 * above). With `noReferences`, runs shown earlier stay too: nothing goes to
 * the CCR store (`--lossless`).
 */
export function compressRead(text: string, ctx: CompressContext, noReferences = false): Compressed {
  const raw = text.split('\n');
  const numbered = numberedNonBlank(raw) > 0;
  // numbered blank lines are not blank: only an unnumbered text loses runs of blank lines
  const lines = collapseRepeats(numbered ? trimEnds(raw) : tidyLines(raw));
  const repeated = noReferences ? new Uint8Array(lines.length) : markRepeatedRuns(lines, ctx.earlierLines());
  const keep = repeated.map(negated);
  const thin = thinNumbers(lines, keep);
  const shown = thin.thinned ? [THINNED_NOTE, ...thin.lines] : thin.lines;
  const shownKeep = thin.thinned ? Uint8Array.from([1, ...keep]) : keep;
  const out = renderKept(shown, shownKeep, { hash: ctx.hash, note: 'shown earlier in the conversation' });
  return out === null ? { text: shown.join('\n'), lossy: false } : { text: out, lossy: true };
}
