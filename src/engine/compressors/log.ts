import { mentionsAny } from '../identifiers.js';
import { capFor, HEAD_LINES, indexBudget, LOG_CONTEXT_LINES, TAIL_LINES } from '../settings.js';
import {
  approxTokensOfLength,
  collapseRepeats,
  fillSmallGaps,
  joinedLength,
  markRepeatedRuns,
  renderKept,
  shortenedLines,
  tidyLines,
  withoutTaskLabels,
} from './lines.js';
import { keepNovel, keepSpread, omittedIdentifiers, Selection } from './select.js';
import type { CompressContext, Compressed } from './types.js';

/** Error and failure lines (plain text, logfmt, and pino/bunyan JSON levels 50+). */
export const ERROR_RE =
  /\b(?:error|errors|err|fatal|panic|exception|fail|failed|failure|failures|failing|traceback|critical|crash(?:ed|loopbackoff)?|denied|refused|timed? ?out|killed|oomkilled|unhandled|segfault|abort(?:ed)?|backoff|evicted|unhealthy)\b|"level":\s*(?:50|60)\b|"(?:level|severity)":\s*"(?:error|fatal|critical)"/i;
/** Warning lines. */
export const WARN_RE =
  /\b(?:warn|warning|warnings|deprecated)\b|"level":\s*40\b|"(?:level|severity)":\s*"warn(?:ing)?"/i;
/** Stack-trace frames and their headers. */
export const STACK_RE =
  /^\s+at\s|^\s+File "|^Traceback|^\s*Caused by\b|^\s+\.\.\. \d+ more|^goroutine \d+|^\s+\S+\.(?:go|rs|py|js|ts|java|rb|ex|exs|cs):\d+|^\s*#\d+\s/;
/** Summary lines: totals, results, exit codes. */
const SUMMARY_RE =
  /\b(?:total|summary|passed|failed|tests?|examples?|finished|completed|duration|elapsed|exit(?:ed)? (?:code|status)|result|build (?:succeeded|failed)|ran \d+)\b.*\d|^\s*\d+ (?:tests?|examples?|passed|failures?|errors?)\b/i;

/** Line shape with numbers, hex ids and quoted values blanked: lines of one kind share a template. */
export function lineTemplate(line: string): string {
  let t = line.length > 400 ? line.slice(0, 400) : line;
  if (t.includes('"')) t = t.replace(QUOTED_RE, '"_"');
  // every run of whitespace becomes one space: runs that are one space already are left alone
  t = t.replace(HEX_RE, '#').replace(DIGITS_RE, '#').replace(SPACES_RE, ' ');
  return t.length > 160 ? t.slice(0, 160) : t;
}

const QUOTED_RE = /"(?:[^"\\]|\\.){0,200}"/g;
const HEX_RE = /\b0x[0-9a-f]+\b|\b[0-9a-f]{7,}\b/gi;
const DIGITS_RE = /\d+/g;
const SPACES_RE = /\s{2,}|[^\S ]/g;
/** `QUOTED_RE` and `SPACES_RE` that never match across a line break (the others cannot). */
const QUOTED_IN_LINE_RE = /"(?:[^"\\\n]|\\.){0,200}"/g;
const SPACES_IN_LINE_RE = /[^\S\n]{2,}|[^\S \n]/g;

/**
 * `lines.map(lineTemplate)` for lines without line breaks, with each replace
 * run once over all the lines joined (no match spans a line break, so every
 * line gets what it would get alone): a few native passes instead of four
 * calls per line.
 */
export function lineTemplates(lines: readonly string[]): string[] {
  if (lines.length === 0) return [];
  let cut = false;
  for (const l of lines) if (l.length > 400) cut = true;
  let t = (cut ? lines.map(first400) : lines).join('\n');
  if (t.includes('"')) t = t.replace(QUOTED_IN_LINE_RE, '"_"');
  t = t.replace(HEX_RE, '#').replace(DIGITS_RE, '#').replace(SPACES_IN_LINE_RE, ' ');
  const out = t.split('\n');
  for (let i = 0; i < out.length; i++) if (out[i]!.length > 160) out[i] = out[i]!.slice(0, 160);
  return out;
}

// callbacks are module functions, not closures made per call: see json-walk.ts
function first400(l: string): string {
  return l.length > 400 ? l.slice(0, 400) : l;
}

function ascending(a: number, b: number): number {
  return a - b;
}

/** A kind of line seen more often than this is common: its lines do not compete on new identifiers. */
const COMMON_KIND = 5;

/** Lines at each end that are always kept, whatever the cap. */
const FORCED_EDGE = 2;

/** How a line-based selection is tuned for one content type. */
export interface LineRules {
  /** Leading lines kept once errors, summaries and warnings are in (a table's header, a log's start). */
  head: number;
  tail: number;
  /** Which entry of `CAPS` sizes the selection. */
  cap: 'log' | 'text' | 'table';
  /** Keep the first line of each template (distinct kinds of line) after novelty. */
  kinds: boolean;
  /**
   * Errors first (logs, tables): the first line of each kind of error is kept
   * even past the cap. Otherwise (documents, where "error" is often just a
   * word) error lines come after lines with new identifiers.
   */
  errorsFirst: boolean;
}

/** Rules for logs. */
export const LOG_RULES: LineRules = {
  head: HEAD_LINES,
  tail: TAIL_LINES,
  cap: 'log',
  kinds: true,
  errorsFirst: true,
};

/**
 * Line-based selection shared by logs, tables and structured text, under the
 * cap of its type. In priority order: the first and last two lines and the
 * first line of each kind of error (kept past the cap, up to the cap again);
 * the stack traces of those errors; summary lines and lines naming a term of
 * the latest user message; the first warning of each kind; a line of context
 * around each first error; the head and tail of `rules`; the last occurrence
 * of recurring errors; lines with new identifiers; the first line of each
 * other kind; an even spread. Repeated
 * lines collapse to a count (lossless); very long kept lines are shortened.
 */
export function compressLines(text: string, ctx: CompressContext, rules: LineRules): Compressed {
  const lines = collapseRepeats(tidyLines(text.split('\n')));
  const n = lines.length;
  const shown = shortenedLines(lines);
  const tokens = approxTokensOfLength(joinedLength(lines));
  const sel = Selection.ofLines(shown, capFor(rules.cap, tokens, ctx.capScale));
  sel.block(markRepeatedRuns(lines, ctx.earlierLines()));
  sel.takeRange(0, FORCED_EDGE, true);
  sel.takeRange(n - FORCED_EDGE, n, true);
  // classified without task runner labels (`pkg:task: `), shown with them
  const bare = withoutTaskLabels(lines);
  const templates = lineTemplates(bare);
  const kindCount = new Map<string, number>();
  const firstErrors: number[] = [];
  const firstWarnings: number[] = [];
  const lastOfKind = new Map<string, number>();
  const seenKinds = new Set<string>();
  const errorLines: number[] = [];
  // summary lines and lines naming a user term, pushed in line order (a line may come twice)
  const wanted: number[] = [];
  const terms = ctx.userTerms;
  for (let i = 0; i < n; i++) {
    const line = bare[i]!;
    const t = templates[i]!;
    kindCount.set(t, (kindCount.get(t) ?? 0) + 1);
    const head = line.length > 2000 ? line.slice(0, 2000) : line;
    const isError = ERROR_RE.test(head);
    const isWarn = !isError && WARN_RE.test(head);
    if (isError || isWarn) {
      if (isError) errorLines.push(i);
      if (!seenKinds.has(t)) {
        seenKinds.add(t);
        (isError ? firstErrors : firstWarnings).push(i);
      } else lastOfKind.set(t, i);
    } else if (line.length < 300 && SUMMARY_RE.test(line)) wanted.push(i);
    if (terms.length > 0 && mentionsAny(line, terms)) wanted.push(i);
  }
  if (rules.errorsFirst) {
    // the first line of each kind of error is kept even past the cap, up to the cap again
    let errorCost = 0;
    // with the message and top frame of its stack trace: the file and line the agent opens next
    for (const i of firstErrors) {
      const before = sel.used;
      if (errorCost <= sel.cap && sel.take(i, true)) {
        takeStackTrace(bare, sel, i, 1);
        errorCost += sel.used - before;
      }
    }
    for (const i of firstErrors) takeStackTrace(bare, sel, i, 0);
  }
  for (const i of wanted) sel.take(i);
  if (rules.errorsFirst) for (const i of firstWarnings) sel.take(i);
  // in a log line of a kind that recurs many times, new identifiers are per-line noise (request
  // ids); a table's rows are all of one kind but each names its own entity
  let novel = shown;
  if (rules.kinds) {
    novel = [];
    for (let i = 0; i < n; i++)
      novel.push((kindCount.get(templates[i]!) ?? 0) > COMMON_KIND ? '' : shown[i]!);
  }
  keepNovel(novel, sel, ctx.seen);
  if (!rules.errorsFirst) for (const i of [...firstErrors, ...firstWarnings].sort(ascending)) sel.take(i);
  for (const i of firstErrors) sel.takeRange(i - LOG_CONTEXT_LINES, i + LOG_CONTEXT_LINES + 1);
  sel.takeRange(0, rules.head);
  sel.takeRange(n - rules.tail, n);
  for (const i of lastOfKind.values()) sel.take(i);
  const keep = sel.keep;
  if (rules.kinds) {
    const kept = new Set<string>();
    for (let i = 0; i < n; i++) if (keep[i]) kept.add(templates[i]!);
    for (let i = 0; i < n && !sel.full; i++) {
      if (kept.has(templates[i]!)) continue;
      kept.add(templates[i]!);
      sel.take(i);
    }
  }
  keepSpread(shown, sel);
  fillSmallGaps(shown, keep);
  let errorsKept = 0;
  for (const i of errorLines) if (keep[i]) errorsKept++;
  const note =
    errorLines.length === 0
      ? undefined
      : errorsKept === errorLines.length
        ? `${errorsKept} error lines kept`
        : `${errorsKept} of ${errorLines.length} error lines kept`;
  const index = omittedIdentifiers(lines, keep, ctx.seen, indexBudget(sel.cap), shown);
  const out = renderKept(shown, keep, { hash: ctx.hash, index, ...(note ? { note } : {}) });
  if (out === null)
    return shown !== lines
      ? { text: shown.join('\n'), lossy: true }
      : { text: lines.join('\n'), lossy: false };
  return { text: out, lossy: true };
}

/** Lines an error's message may take (an assertion's expected and received values) before its stack trace. */
const MESSAGE_LINES = 6;

/**
 * Keeps the stack trace that follows an error line (up to 40 frames): its
 * first `forced` frames even past the cap, the others while they fit. A trace
 * that starts within `MESSAGE_LINES` after the error (test runners print the
 * assertion's values first) is kept with the lines between, as the first frame is.
 */
function takeStackTrace(lines: readonly string[], sel: Selection, i: number, forced: number): void {
  let first = i + 1;
  while (first < lines.length && first - i <= MESSAGE_LINES && !STACK_RE.test(lines[first]!)) first++;
  if (first >= lines.length || !STACK_RE.test(lines[first]!)) return;
  for (let j = i + 1; j < first; j++) sel.take(j, forced > 0);
  for (let j = first; j < lines.length && j - first < 40; j++) {
    if (!STACK_RE.test(lines[j]!)) break;
    sel.take(j, j - first < forced);
  }
}

/** Logs (build, test, server): see `compressLines`. */
export function compressLog(text: string, ctx: CompressContext): Compressed {
  return compressLines(text, ctx, LOG_RULES);
}
