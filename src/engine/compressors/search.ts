import { mentionsAny } from '../identifiers.js';
import { SEARCH_MATCHES_PER_FILE } from '../settings.js';
import { approxTokens, fillSmallGaps, renderKept, tidyLines } from './lines.js';
import { ERROR_RE } from './log.js';
import { keepNovelLines, LineBudget } from './select.js';
import type { CompressContext, Compressed } from './types.js';

const MATCH_RE = /^((?:\.{0,2}\/)?[^\s:]+?)[:-](\d+)[:-]/;
const PATH_RE = /^(?:[A-Za-z]:)?[.~]?\/?(?:[\w@.+-]+\/)+[\w@.+ -]*\/?$/;

/** The file a search-result line belongs to ('' for headers and summaries). */
function fileOf(line: string): string {
  const m = MATCH_RE.exec(line);
  if (m) return m[1]!;
  return PATH_RE.test(line.trim()) ? line.trim() : '';
}

function searchBudget(total: number): number {
  return Math.min(2000, Math.max(200, Math.round(total * 0.2)));
}

/**
 * Search results (grep, ripgrep) and file lists: grouped by file, keeps the
 * first matches of every file (spread across files), matches naming a term of
 * the latest user message or an error, lines with new identifiers, and all
 * header/summary lines; the marker gives the totals.
 */
export function compressSearch(text: string, ctx: CompressContext): Compressed {
  const lines = tidyLines(text.split('\n'));
  const n = lines.length;
  const keep = new Uint8Array(n);
  const files = new Map<string, number[]>();
  let matches = 0;
  for (let i = 0; i < n; i++) {
    const line = lines[i]!;
    const file = fileOf(line);
    if (!file) {
      if (line.trim() !== '') keep[i] = 1;
      continue;
    }
    matches++;
    const list = files.get(file) ?? [];
    list.push(i);
    files.set(file, list);
    if ((ctx.userTerms.length > 0 && mentionsAny(line, ctx.userTerms)) || ERROR_RE.test(line)) keep[i] = 1;
  }
  const budget = new LineBudget(searchBudget(approxTokens(lines.join('\n'))), lines, keep);
  for (let round = 0; round < SEARCH_MATCHES_PER_FILE && !budget.full; round++) {
    for (const list of files.values()) if (list[round] !== undefined) budget.take(list[round]!);
  }
  keepNovelLines(lines, budget, keep, ctx.seen);
  fillSmallGaps(lines, keep);
  const note = `${matches} ${matches === files.size ? 'paths' : `matches in ${files.size} files`}`;
  const out = renderKept(lines, keep, { hash: ctx.hash, unit: 'lines', note });
  return out === null ? { text: lines.join('\n'), lossy: false } : { text: out, lossy: true };
}
