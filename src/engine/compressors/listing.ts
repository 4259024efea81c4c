/**
 * Numbered listings: file contents as `cat -n` or an agent's Read tool prints
 * them (`     12→code` or `    12\tcode`). The numbers stay; their padding is
 * redundant whitespace.
 */
const NUMBERED_RE = /^ *(\d+)(→|\t)(.*)$/;

/** True when most lines are numbered (trailing notes after the listing are allowed). */
export function isNumberedListing(lines: readonly string[]): boolean {
  let numbered = 0;
  let nonEmpty = 0;
  for (const l of lines) {
    if (l.trim() === '') continue;
    nonEmpty++;
    if (NUMBERED_RE.test(l)) numbered++;
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
  return lines.map((l) => l.replace(/^ +(\d+(?:→|\t))/, '$1'));
}
