import { lineKey, MIN_LINE_CHARS } from '../history.js';
import { mentionsAny } from '../identifiers.js';
import { CODE_FOLD_MAX, CODE_FOLD_MIN_TOKENS, CODE_FOLD_SHARE, HEAD_LINES } from '../settings.js';
import { approxTokens, collapseRepeats, fillSmallGaps, keepRange, renderKept, tidyLines } from './lines.js';
import { keepNovelLines, LineBudget } from './select.js';
import { isNumberedListing, unpadListing } from './listing.js';
import type { CompressContext, Compressed } from './types.js';

/** Shortest run of lines, all shown earlier in the conversation, that is replaced by a note. */
const MIN_REPEATED_RUN = 4;

/**
 * Marks for removal every run of at least `MIN_REPEATED_RUN` lines whose
 * substantial lines (and at least 3 of them) all occurred earlier in the
 * conversation: a file read again after an edit, a file the agent wrote.
 */
function dropRepeatedRuns(lines: readonly string[], earlier: ReadonlySet<string>, keep: Uint8Array): number {
  let dropped = 0;
  for (let i = 0; i < lines.length; ) {
    const start = i;
    let known = 0;
    for (; i < lines.length; i++) {
      const key = lineKey(lines[i]!);
      if (key.length < MIN_LINE_CHARS) continue;
      if (!earlier.has(key)) break;
      known++;
    }
    // trailing short lines belong to the next run, not this one
    let end = i;
    while (end > start && lineKey(lines[end - 1]!).length < MIN_LINE_CHARS) end--;
    if (end - start >= MIN_REPEATED_RUN && known >= 3) {
      keep.fill(0, start, end);
      dropped += end - start;
    }
    if (i === start) i++;
  }
  return dropped;
}

/** Definitions and other structure lines a folded file keeps. */
const DEFINITION_RE =
  /^\s*(?:(?:export\s+)?(?:default\s+)?(?:async\s+)?(?:def|defp|defmacro|defmodule|defstruct|defimpl|defprotocol|function\*?|class|interface|type|enum|struct|trait|impl|fn|func|module|namespace|package|describe|it|test|context)\b|(?:public|private|protected|static|internal|override)\s|(?:export\s+)?(?:const|let|var)\s+\w+\s*=\s*(?:async\s*)?(?:\(|function)|@(?:doc|moduledoc|spec|impl|callback)\b|(?:import|from|require|use|alias|include)\b|#include|[A-Za-z_][\w.]*:\s*$)/;

/** Budget of a folded file beyond its definitions: this share of its tokens, clamped. */
function foldBudget(tokens: number): number {
  return Math.min(CODE_FOLD_MAX, Math.max(200, Math.round(tokens * CODE_FOLD_SHARE)));
}

/**
 * Folds a large file: keeps its first lines, definitions (signatures,
 * imports, attributes), lines naming a term of the latest user message, and,
 * within a budget, the lines that introduce identifiers not seen before in
 * the conversation; bodies between them become gap notes.
 */
function fold(lines: readonly string[], keep: Uint8Array, ctx: CompressContext): void {
  const candidates = keep.slice();
  keep.fill(0);
  keepRange(keep, 0, HEAD_LINES);
  for (let i = 0; i < lines.length; i++) {
    if (!candidates[i]) continue;
    const line = lines[i]!;
    if (DEFINITION_RE.test(lineKey(line)) || (ctx.userTerms.length > 0 && mentionsAny(line, ctx.userTerms))) keep[i] = 1;
  }
  const budget = new LineBudget(foldBudget(approxTokens(lines.join('\n'))), lines, keep);
  const masked = lines.map((l, i) => (candidates[i] ? l : ''));
  keepNovelLines(masked, budget, keep, ctx.seen);
}

/**
 * Source code: conservative. Trailing whitespace, runs of blank lines and the
 * padding of line numbers go; runs of identical lines collapse to a count;
 * runs of lines already shown earlier in the conversation (the same file
 * read again, a file the agent itself wrote) become a note. Files still
 * larger than `CODE_FOLD_MIN_TOKENS` are folded (see `fold`). Kept lines are
 * never changed.
 */
export function compressCode(text: string, ctx: CompressContext): Compressed {
  let lines = text.split('\n');
  if (isNumberedListing(lines)) lines = unpadListing(lines);
  lines = collapseRepeats(tidyLines(lines));
  const keep = new Uint8Array(lines.length).fill(1);
  const repeated = dropRepeatedRuns(lines, ctx.earlierLines(), keep);
  const remaining = lines.filter((_, i) => keep[i]).join('\n');
  const folded = ctx.countTokens(remaining) >= CODE_FOLD_MIN_TOKENS;
  if (folded) fold(lines, keep, ctx);
  if (folded || repeated > 0) {
    fillSmallGaps(lines, keep);
    const note = folded ? 'bodies folded' : 'shown earlier in the conversation';
    const out = renderKept(lines, keep, { hash: ctx.hash, note });
    if (out !== null) return { text: out, lossy: true };
  }
  return { text: lines.join('\n'), lossy: false };
}
