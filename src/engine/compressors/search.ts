import { mentionsAny } from '../identifiers.js';
import { formatOtherFiles } from '../markers.js';
import { capFor, indexBudget, SEARCH_MATCHES_PER_FILE } from '../settings.js';
import { approxTokens, fillSmallGaps, renderKept, shortenLine, tidyLines } from './lines.js';
import { ERROR_RE } from './log.js';
import { compressRead } from './read.js';
import { keepNovel, omittedIdentifiers, Selection } from './select.js';
import type { CompressContext, Compressed } from './types.js';

const MATCH_RE = /^(?=[^:\s]*[A-Za-z])((?:\.{0,2}\/)?[^\s:]+?)[:-](\d+)[:-]/;
const PATH_RE = /^(?:[A-Za-z]:)?[.~]?\/?(?:[\w@.+-]+\/)+[\w@.+ -]*\/?$/;

/** The file a search-result line belongs to ('' for headers and summaries). */
function fileOf(full: string): string {
  const line = full.length > 500 ? full.slice(0, 500) : full;
  const m = MATCH_RE.exec(line);
  if (m) return m[1]!;
  return PATH_RE.test(line.trim()) ? line.trim() : '';
}

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
  const shown = lines.map(shortenLine);
  const n = lines.length;
  const sel = Selection.ofLines(shown, capFor('search', approxTokens(lines.join('\n')), ctx.capScale));
  const files = new Map<string, number[]>();
  const wanted: number[] = [];
  let matches = 0;
  let pathLines = 0;
  for (let i = 0; i < n; i++) {
    const line = lines[i]!;
    const file = fileOf(line);
    if (!file) {
      if (line.trim() !== '') sel.take(i, true);
      continue;
    }
    matches++;
    if (!MATCH_RE.test(line.length > 500 ? line.slice(0, 500) : line)) pathLines++;
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
  const unshown = [...files].filter(([, list]) => list.every((i) => !sel.keep[i]));
  const known = unshown.length > 0 ? new Set([...ctx.seen, ...unshown.map(([f]) => f)]) : ctx.seen;
  const index = omittedIdentifiers(lines, sel.keep, known, indexBudget(sel.cap), shown);
  const out = renderKept(shown, sel.keep, { hash: ctx.hash, unit: 'lines', note, index });
  if (out === null) return { text: lines.join('\n'), lossy: false };
  if (unshown.length === 0) return { text: out, lossy: true };
  const listed = unshown.map(([f, list]) => `${f} (${list.length})`).join(', ');
  return { text: `${out}\n${formatOtherFiles(unshown.length, listed)}`, lossy: true };
}
