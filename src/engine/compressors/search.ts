import { mentionsAny } from '../identifiers.js';
import { formatOtherFiles } from '../markers.js';
import { capFor, indexBudget, SEARCH_MATCHES_PER_FILE } from '../settings.js';
import {
  approxTokensOfLength,
  fillSmallGaps,
  isBlank,
  joinedLength,
  renderKept,
  shortenedLines,
  tidyLines,
} from './lines.js';
import { ERROR_RE } from './log.js';
import { compressRead } from './read.js';
import { keepNovel, omittedIdentifiersExcept, Selection } from './select.js';
import type { CompressContext, Compressed } from './types.js';

const MATCH_RE = /^(?=[^:\s]*[A-Za-z])((?:\.{0,2}\/)?[^\s:]+?)[:-](\d+)[:-]/;
const PATH_RE = /^(?:[A-Za-z]:)?[.~]?\/?(?:[\w@.+-]+\/)+[\w@.+ -]*\/?$/;

/** Characters of a line the patterns look at. */
const TESTED_CHARS = 500;

/**
 * Search results (grep, ripgrep) and file lists. A list of paths alone keeps
 * every path at first sight (`compressRead`). Otherwise grouped by file, keeps the
 * first matches of every file (spread across files), matches naming a term of
 * the latest user message or an error, lines with new identifiers, and all
 * header/summary lines; the marker gives the totals, and every file none of
 * whose matches is kept is named with its count of matches.
 */
export function compressSearch(text: string, ctx: CompressContext): Compressed {
  const lines = tidyLines(text.split('\n'));
  const shown = shortenedLines(lines);
  const n = lines.length;
  const sel = Selection.ofLines(
    shown,
    capFor('search', approxTokensOfLength(joinedLength(lines)), ctx.capScale),
  );
  const files = new Map<string, number[]>();
  const wanted: number[] = [];
  let matches = 0;
  let pathLines = 0;
  for (let i = 0; i < n; i++) {
    const line = lines[i]!;
    // the file the line belongs to: a match's, a listed path, or none (headers and summaries)
    const head = line.length > TESTED_CHARS ? line.slice(0, TESTED_CHARS) : line;
    const match = MATCH_RE.exec(head);
    let file = match ? match[1]! : '';
    if (!match) {
      const path = head.trim();
      if (PATH_RE.test(path)) file = path;
    }
    if (!file) {
      if (!isBlank(line)) sel.take(i, true);
      continue;
    }
    matches++;
    if (!match) pathLines++;
    const list = files.get(file) ?? [];
    list.push(i);
    files.set(file, list);
    if ((ctx.userTerms.length > 0 && mentionsAny(line, ctx.userTerms)) || ERROR_RE.test(line)) wanted.push(i);
  }
  // a path listing (Glob, `find`, `rg -l`) keeps every path at first sight
  if (ctx.firstSight && matches > 0 && pathLines === matches) return compressRead(text, ctx);
  for (const i of wanted) sel.take(i);
  for (let round = 0; round < SEARCH_MATCHES_PER_FILE && !sel.full; round++) {
    for (const list of files.values()) if (list[round] !== undefined) sel.take(list[round]!);
  }
  keepNovel(shown, sel, ctx.seen);
  fillSmallGaps(shown, sel.keep);
  const note = `${matches} ${matches === files.size ? 'paths' : `matches in ${files.size} files`}`;
  // every file with matches stays named: those without a kept line are listed with their counts
  const unshown: Array<[string, number[]]> = [];
  for (const [file, list] of files) if (noneKept(list, sel.keep)) unshown.push([file, list]);
  // the files listed below the marker are named there
  const listedFiles = new Set(unshown.map(([f]) => f));
  const index = omittedIdentifiersExcept(lines, sel.keep, ctx.seen, listedFiles, indexBudget(sel.cap), shown);
  const out = renderKept(shown, sel.keep, { hash: ctx.hash, unit: 'lines', note, index });
  if (out === null) return { text: lines.join('\n'), lossy: false };
  if (unshown.length === 0) return { text: out, lossy: true };
  const listed = unshown.map(([f, list]) => `${f} (${list.length})`).join(', ');
  return { text: `${out}\n${formatOtherFiles(unshown.length, listed)}`, lossy: true };
}

/** True when none of the lines `list` is kept. */
function noneKept(list: readonly number[], keep: Uint8Array): boolean {
  for (const i of list) if (keep[i]) return false;
  return true;
}
