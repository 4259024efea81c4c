import { isBlank } from './lines.js';

/**
 * Numbered listings: file contents as `cat -n` or an agent's Read tool prints
 * them (`     12→code` or `    12\tcode`). The numbers stay; their padding is
 * redundant whitespace.
 */
const NUMBERED_RE = /^ *(\d+)(→|\t)(.*)$/;

/** The padding before a line's number, and the number with its separator. */
export const PADDED_NUMBER_RE = /^ +(\d+(?:→|\t))/;

/** True when most lines are numbered (trailing notes after the listing are allowed). */
export function isNumberedListing(lines: readonly string[]): boolean {
  let numbered = 0;
  let nonEmpty = 0;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    if (isBlank(l)) continue;
    nonEmpty++;
    if (NUMBERED_RE.test(l)) numbered++;
    // settled: even if every line left were numbered, they would be under 80 % (by at least a line)
    else if (numbered + lines.length - i - 1 < 4 * (nonEmpty - numbered)) return false;
  }
  return nonEmpty >= 3 && numbered >= nonEmpty * 0.8;
}

/** The listing's lines without their numbers (other lines as they are). */
export function listingBody(lines: readonly string[]): string[] {
  return lines.map((l) => {
    const m = NUMBERED_RE.exec(l);
    return m ? m[3]! : l;
  });
}

/** Drops the left padding of line numbers: `     12→x` -> `12→x`. */
export function unpadListing(lines: readonly string[]): string[] {
  return lines.map((l) => l.replace(PADDED_NUMBER_RE, '$1'));
}
