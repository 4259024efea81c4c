import { mentionsAny } from '../identifiers.js';
import { lineKey } from '../known.js';
import { CODE_FOLD_MIN_TOKENS, capFor, HEAD_LINES, indexBudget } from '../settings.js';
import {
  approxTokensOfLength,
  collapseRepeats,
  fillSmallGaps,
  joinedLength,
  markRepeatedRuns,
  renderKept,
  tidyLines,
} from './lines.js';
import { isNumberedListing, unpadListing } from './listing.js';
import { compressRead } from './read.js';
import { keepNovel, omittedIdentifiers, Selection } from './select.js';
import type { CompressContext, Compressed } from './types.js';

/** Definitions and other structure lines a folded file keeps. */
const DEFINITION_RE =
  /^\s*(?:(?:export\s+)?(?:default\s+)?(?:async\s+)?(?:def|defp|defmacro|defmodule|defstruct|defimpl|defprotocol|function\*?|class|interface|type|enum|struct|trait|impl|fn|func|module|namespace|package|describe|it|test|context)\b|(?:public|private|protected|static|internal|override)\s|(?:export\s+)?(?:const|let|var)\s+\w+\s*=\s*(?:async\s*)?(?:\(|function)|@(?:doc|moduledoc|spec|impl|callback)\b|(?:import|from|require|use|alias|include)\b|#include|[A-Za-z_][\w.]*:\s*$|[A-Za-z_][\w<>:*&, ]*\s[*&]*[A-Za-z_][\w:]*\s*\([^;]*\)\s*\{?\s*$)/;

/**
 * Folds a large file under the code cap: keeps its first lines, then (while
 * they fit) definitions (signatures, imports, attributes) and lines naming a
 * term of the latest user message, then lines that introduce identifiers not
 * seen before in the conversation; bodies between them become gap notes.
 */
function fold(lines: readonly string[], keep: Uint8Array, ctx: CompressContext): number {
  const candidate = keep.slice();
  const masked = lines.map((l, i) => (candidate[i] ? l : ''));
  const sel = Selection.ofLines(
    masked,
    capFor('code', approxTokensOfLength(joinedLength(masked)), ctx.capScale),
  );
  for (let i = 0; i < Math.min(HEAD_LINES, lines.length); i++) if (candidate[i]) sel.take(i, true);
  for (let i = 0; i < lines.length; i++) {
    if (!candidate[i]) continue;
    const line = lines[i]!;
    if (DEFINITION_RE.test(lineKey(line)) || (ctx.userTerms.length > 0 && mentionsAny(line, ctx.userTerms)))
      sel.take(i);
  }
  keepNovel(masked, sel, ctx.seen);
  keep.set(sel.keep);
  return sel.cap;
}

/**
 * Source code. At first sight (`ctx.firstSight`) a numbered listing is a file
 * the agent has just read and is never cut: `compressRead`. Otherwise
 * (unnumbered code printed by a command, or the context manager compressing
 * harder near the model's limit): trailing whitespace, runs of blank lines
 * and the padding of line numbers go; runs of identical lines collapse to a
 * count; runs of lines already shown earlier in the conversation become a
 * note; files still larger than `CODE_FOLD_MIN_TOKENS` are folded (see
 * `fold`), under a marker whose hash retrieves the exact text. Kept lines are
 * never changed.
 */
export function compressCode(text: string, ctx: CompressContext): Compressed {
  if (ctx.firstSight && isNumberedListing(text.split('\n', 400))) return compressRead(text, ctx);
  let lines = text.split('\n');
  if (isNumberedListing(lines)) lines = unpadListing(lines);
  lines = collapseRepeats(tidyLines(lines));
  const keep = new Uint8Array(lines.length).fill(1);
  const repeatedMask = markRepeatedRuns(lines, ctx.earlierLines());
  let repeated = 0;
  // characters of the lines left, as joined by newlines
  let remaining = -1;
  for (let i = 0; i < lines.length; i++) {
    if (repeatedMask[i]) {
      keep[i] = 0;
      repeated++;
    } else remaining += lines[i]!.length + 1;
  }
  const folded = approxTokensOfLength(Math.max(0, remaining)) >= CODE_FOLD_MIN_TOKENS;
  const cap = folded ? fold(lines, keep, ctx) : 0;
  if (folded || repeated > 0) {
    fillSmallGaps(lines, keep);
    const note = folded ? 'bodies folded' : 'shown earlier in the conversation';
    const index = folded ? omittedIdentifiers(lines, keep, ctx.seen, indexBudget(cap)) : [];
    const out = renderKept(lines, keep, { hash: ctx.hash, note, index });
    if (out !== null) return { text: out, lossy: true };
  }
  return { text: lines.join('\n'), lossy: false };
}
