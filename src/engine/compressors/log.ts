import { mentionsAny } from '../identifiers.js';
import { HEAD_LINES, LOG_CONTEXT_LINES, TAIL_LINES } from '../settings.js';
import { approxTokens, collapseRepeats, fillSmallGaps, keepRange, renderKept, tidyLines } from './lines.js';
import { keepNovelLines, keepSpread, LineBudget } from './select.js';
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
    .slice(0, 160);
}

/** How a line-based selection is tuned for one content type. */
export interface LineRules {
  /** Leading lines always kept (a table's header, a log's start). */
  head: number;
  tail: number;
  /** Optional-line budget: this share of the text's tokens, clamped to [min, max]. */
  share: number;
  min: number;
  max: number;
  /** Keep the first line of each template (distinct kinds of line) before novelty. */
  kinds: boolean;
}

/** Rules for logs. */
export const LOG_RULES: LineRules = {
  head: HEAD_LINES,
  tail: TAIL_LINES,
  share: 0.1,
  min: 150,
  max: 2000,
  kinds: true,
};

/**
 * Line-based selection shared by logs, tables and structured text: keeps the
 * head and tail, every distinct error and warning (first two and last
 * occurrence of each kind) with context and stack trace, summary lines, lines
 * naming a term of the latest user message; then, within the budget, the
 * first line of each other kind, lines with new identifiers, and an even
 * spread. Repeated lines collapse to a count (lossless).
 */
export function compressLines(text: string, ctx: CompressContext, rules: LineRules): Compressed {
  const lines = collapseRepeats(tidyLines(text.split('\n')));
  const lossless = lines.join('\n');
  const n = lines.length;
  const keep = new Uint8Array(n);
  keepRange(keep, 0, rules.head);
  keepRange(keep, n - rules.tail, n);
  const templates = lines.map(lineTemplate);
  const incidents = new Map<string, number[]>();
  let errors = 0;
  for (let i = 0; i < n; i++) {
    const line = lines[i]!;
    const isError = ERROR_RE.test(line);
    const isWarn = !isError && WARN_RE.test(line);
    if (isError || isWarn) {
      const occ = incidents.get(templates[i]!) ?? [];
      occ.push(i);
      incidents.set(templates[i]!, occ);
      if (isError) errors++;
      if (occ.length <= (isError ? 2 : 1)) keepIncident(lines, keep, i, isError ? LOG_CONTEXT_LINES : 0);
    } else if (SUMMARY_RE.test(line) && line.length < 300) keep[i] = 1;
    if (ctx.userTerms.length > 0 && mentionsAny(line, ctx.userTerms)) keep[i] = 1;
  }
  for (const occ of incidents.values())
    if (occ.length > 2) keepIncident(lines, keep, occ[occ.length - 1]!, 0);
  const total = approxTokens(lossless);
  const optional = new LineBudget(
    Math.min(rules.max, Math.max(rules.min, Math.round(total * rules.share))),
    lines,
    keep,
  );
  if (rules.kinds) {
    const firstOfKind = new Set<string>();
    for (let i = 0; i < n && !optional.full; i++) {
      if (firstOfKind.has(templates[i]!)) continue;
      firstOfKind.add(templates[i]!);
      optional.take(i);
    }
  }
  keepNovelLines(lines, optional, keep, ctx.seen);
  keepSpread(lines, optional, keep);
  fillSmallGaps(lines, keep);
  const note = errors > 0 ? `${errors} error lines; every kind kept` : undefined;
  const out = renderKept(lines, keep, { hash: ctx.hash, ...(note ? { note } : {}) });
  return out === null ? { text: lossless, lossy: false } : { text: out, lossy: true };
}

/** Keeps an error line, `context` lines around it, and the stack trace that follows. */
function keepIncident(lines: readonly string[], keep: Uint8Array, i: number, context: number): void {
  keepRange(keep, i - context, i + context + 1);
  for (let j = i + 1; j < lines.length && j - i <= 40; j++) {
    if (!STACK_RE.test(lines[j]!)) break;
    keep[j] = 1;
  }
}

/** Logs (build, test, server): see `compressLines`. */
export function compressLog(text: string, ctx: CompressContext): Compressed {
  return compressLines(text, ctx, LOG_RULES);
}
