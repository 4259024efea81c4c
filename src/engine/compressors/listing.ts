import { isBlank } from './lines.js';

/**
 * Numbered listings: file contents as `cat -n` or an agent's Read tool prints
 * them (`     12→code` or `    12\tcode`). The numbers stay; their padding is
 * redundant whitespace.
 */
export const NUMBERED_RE = /^ *(\d+)(→|\t)(.*)$/;

/** The padding before a line's number, and the number with its separator. */
export const PADDED_NUMBER_RE = /^ +(\d+(?:→|\t))/;

/**
 * How many non-blank lines `lines` has when at least 80 % of them are
 * numbered (trailing notes after the listing are allowed), else 0. Stops as
 * soon as the rest cannot reach 80 %.
 */
export function numberedNonBlank(lines: readonly string[]): number {
  return judgeNumbered(lines, undefined);
}

/**
 * `NUMBERED_RE`'s match of each line when `lines` is a numbered listing
 * (`numberedNonBlank(lines) > 0`), else null, in one pass that both judges
 * and parses: a listing's lines are each matched once, not tested and then
 * matched again.
 */
export function numberedMatches(lines: readonly string[]): (RegExpExecArray | null)[] | null {
  const matches = new Array<RegExpExecArray | null>(lines.length);
  return judgeNumbered(lines, matches) > 0 ? matches : null;
}

/** `numberedNonBlank`, keeping each line's match in `matches` when given. */
function judgeNumbered(lines: readonly string[], matches: (RegExpExecArray | null)[] | undefined): number {
  let numbered = 0;
  let nonEmpty = 0;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    let isNumbered: boolean;
    if (matches) {
      const m = NUMBERED_RE.exec(l);
      matches[i] = m;
      isNumbered = m !== null;
    } else isNumbered = NUMBERED_RE.test(l);
    // a numbered line is never blank (it holds a digit)
    if (isNumbered) {
      numbered++;
      nonEmpty++;
      continue;
    }
    if (isBlank(l)) continue;
    nonEmpty++;
    // settled: even if every line left were numbered, they would be under 80 % (by at least a line)
    if (numbered + lines.length - i - 1 < 4 * (nonEmpty - numbered)) return 0;
  }
  return numbered >= nonEmpty * 0.8 ? nonEmpty : 0;
}

/** True when most of at least three non-blank lines are numbered (`numberedNonBlank`). */
export function isNumberedListing(lines: readonly string[]): boolean {
  return numberedNonBlank(lines) >= 3;
}

/** The listing's lines without their numbers (other lines as they are). */
export function listingBody(lines: readonly string[]): string[] {
  return lines.map(withoutNumber);
}

// callbacks are module functions, not closures made per call: see json-walk.ts
function withoutNumber(l: string): string {
  const m = NUMBERED_RE.exec(l);
  return m ? m[3]! : l;
}

function unpadded(l: string): string {
  return l.replace(PADDED_NUMBER_RE, '$1');
}

/** Drops the left padding of line numbers: `     12→x` -> `12→x`. */
export function unpadListing(lines: readonly string[]): string[] {
  return lines.map(unpadded);
}
