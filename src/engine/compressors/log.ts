import { mentionsAny } from '../identifiers.js';
import { capFor, HEAD_LINES, indexBudget, LOG_CONTEXT_LINES, TAIL_LINES } from '../settings.js';
import {
  approxTokens,
  collapseRepeats,
  fillSmallGaps,
  markRepeatedRuns,
  renderKept,
  shortenLine,
  tidyLines,
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
  return line
    .replace(/"(?:[^"\\]|\\.){0,200}"/g, '"_"')
    .replace(/\b0x[0-9a-f]+\b|\b[0-9a-f]{7,}\b/gi, '#')
    .replace(/\d+/g, '#')
    .replace(/\s+/g, ' ')
    .slice(0, 160);
}

/** How a line-based selection is tuned for one content type. */
export interface LineRules {
  /** Leading lines always kept (a table's header, a log's start). */
  head: number;
  tail: number;
  /** Which entry of `CAPS` sizes the selection. */
  cap: 'log' | 'text' | 'table';
  /** Keep the first line of each template (distinct kinds of line) after novelty. */
  kinds: boolean;
}

/** Rules for logs. */
export const LOG_RULES: LineRules = { head: HEAD_LINES, tail: TAIL_LINES, cap: 'log', kinds: true };

/**
 * Line-based selection shared by logs, tables and structured text, under the
 * cap of its type. In priority order: the head and tail; the first line of
 * each kind of error, lines naming a term of the latest user message, summary
 * lines; the context and stack trace of each first error, the first warning
 * of each kind, the last occurrence of recurring errors; lines with new
 * identifiers; the first line of each other kind; an even spread. Repeated
 * lines collapse to a count (lossless); very long kept lines are shortened.
 */
export function compressLines(text: string, ctx: CompressContext, rules: LineRules): Compressed {
  const lines = collapseRepeats(tidyLines(text.split('\n')));
  const lossless = lines.join('\n');
  const n = lines.length;
  const shown = lines.map(shortenLine);
  const sel = Selection.ofLines(shown, capFor(rules.cap, approxTokens(lossless)));
  const repeated = markRepeatedRuns(lines, ctx.earlierLines());
  sel.block(repeated);
  sel.takeRange(0, rules.head, true);
  sel.takeRange(n - rules.tail, n, true);
  const templates = lines.map(lineTemplate);
  const firstErrors: number[] = [];
  const firstWarnings: number[] = [];
  const lastOfKind = new Map<string, number>();
  const seenKinds = new Set<string>();
  let errors = 0;
  const wanted: number[] = [];
  for (let i = 0; i < n; i++) {
    const line = lines[i]!;
    const isError = ERROR_RE.test(line);
    const isWarn = !isError && WARN_RE.test(line);
    if (isError || isWarn) {
      if (isError) errors++;
      const t = templates[i]!;
      if (!seenKinds.has(t)) {
        seenKinds.add(t);
        (isError ? firstErrors : firstWarnings).push(i);
      } else lastOfKind.set(t, i);
    } else if (SUMMARY_RE.test(line) && line.length < 300) wanted.push(i);
    if (ctx.userTerms.length > 0 && mentionsAny(line, ctx.userTerms)) wanted.push(i);
  }
  // the first line of each kind of error is kept even past the cap, up to the cap again
  let errorCost = 0;
  for (const i of firstErrors) {
    const before = sel.used;
    if (errorCost <= sel.cap && sel.take(i, true)) errorCost += sel.used - before;
  }
  for (const i of wanted.sort((a, b) => a - b)) sel.take(i);
  for (const i of firstErrors) takeIncident(lines, sel, i, LOG_CONTEXT_LINES);
  for (const i of firstWarnings) sel.take(i);
  for (const i of lastOfKind.values()) sel.take(i);
  keepNovel(shown, sel, ctx.seen);
  if (rules.kinds) {
    const kept = new Set(templates.filter((_, i) => sel.keep[i]));
    for (let i = 0; i < n && !sel.full; i++) {
      if (kept.has(templates[i]!)) continue;
      kept.add(templates[i]!);
      sel.take(i);
    }
  }
  keepSpread(shown, sel);
  const keep = sel.keep;
  fillSmallGaps(shown, keep);
  const note = errors > 0 ? `${errors} error lines` : undefined;
  const index = omittedIdentifiers(lines, keep, ctx.seen, indexBudget(sel.cap), shown);
  const out = renderKept(shown, keep, { hash: ctx.hash, index, ...(note ? { note } : {}) });
  if (out === null)
    return shown.some((l, i) => l !== lines[i])
      ? { text: shown.join('\n'), lossy: true }
      : { text: lossless, lossy: false };
  return { text: out, lossy: true };
}

/** Keeps, while they fit, `context` lines around an error and the stack trace that follows it. */
function takeIncident(lines: readonly string[], sel: Selection, i: number, context: number): void {
  sel.takeRange(i - context, i + context + 1);
  for (let j = i + 1; j < lines.length && j - i <= 40; j++) {
    if (!STACK_RE.test(lines[j]!)) break;
    sel.take(j);
  }
}

/** Logs (build, test, server): see `compressLines`. */
export function compressLog(text: string, ctx: CompressContext): Compressed {
  return compressLines(text, ctx, LOG_RULES);
}
