import { type KnownLines, lineKey, MIN_LINE_CHARS } from '../known.js';
import { formatGap, formatIndex, formatMarker, formatRepeat, type MarkerUnit } from '../markers.js';
import { LONG_LINE_CHARS } from '../settings.js';

/** Rough token estimate used only to budget selections (exact counts decide acceptance). */
export function approxTokens(text: string): number {
  return approxTokensOfLength(text.length);
}

/** `approxTokens` of a text of `length` characters. */
export function approxTokensOfLength(length: number): number {
  return Math.ceil(length / 3.5);
}

/** Length of `lines.join('\n')`, without joining. */
export function joinedLength(lines: readonly string[]): number {
  let length = lines.length - 1;
  for (const l of lines) length += l.length;
  return Math.max(0, length);
}

/**
 * True when `line` is empty or all whitespace: `line.trim() === ''` without
 * the trimmed copy (`\s` is the set `trim` removes).
 */
export function isBlank(line: string): boolean {
  const c = line.charCodeAt(0);
  // most lines start with a visible ASCII character
  if (c > 32 && c < 0x7f) return false;
  return !NON_BLANK_RE.test(line);
}

const NON_BLANK_RE = /\S/;

/** Token cost of a gap note, below which a gap is not worth making. */
const GAP_COST = 6;

/**
 * Keeps dropped runs that are cheaper than the note that would replace them,
 * so no gap note costs more than what it hides.
 */
export function fillSmallGaps(lines: readonly string[], keep: Uint8Array): void {
  let i = 0;
  while (i < lines.length) {
    if (keep[i]) {
      i++;
      continue;
    }
    let j = i;
    let cost = 0;
    for (; j < lines.length && !keep[j]; j++) cost += approxTokens(lines[j]!) + 1;
    if (cost <= GAP_COST) keep.fill(1, i, j);
    i = j;
  }
}

/** Marks `[from, to)` as kept, clamped to the array. */
export function keepRange(keep: Uint8Array, from: number, to: number): void {
  keep.fill(1, Math.max(0, from), Math.min(keep.length, to));
}

/** How `renderKept` writes its markers. */
export interface RenderOptions {
  hash: string;
  unit?: MarkerUnit;
  /** Short note for the full marker, e.g. "12 errors kept". */
  note?: string;
  /** Names that occur only in the omitted lines (see `omittedIdentifiers`). */
  index?: readonly string[];
}

/**
 * Renders kept lines in their original order. A single gap gets the full
 * marker in place; several gaps get short notes and one full marker at the
 * end that names the total and the hash. Returns null when nothing is dropped.
 */
export function renderKept(lines: readonly string[], keep: Uint8Array, opts: RenderOptions): string | null {
  const unit = opts.unit ?? 'lines';
  const gaps: Array<[number, number]> = [];
  for (let i = 0; i < lines.length; ) {
    if (keep[i]) {
      i++;
      continue;
    }
    let j = i;
    while (j < lines.length && !keep[j]) j++;
    gaps.push([i, j]);
    i = j;
  }
  if (gaps.length === 0) return null;
  const total = gaps.reduce((n, [a, b]) => n + b - a, 0);
  const full = formatMarker({
    hash: opts.hash,
    omitted: total,
    unit,
    ...(opts.note ? { note: opts.note } : {}),
  });
  const out: string[] = [];
  let g = 0;
  for (let i = 0; i < lines.length; ) {
    const gap = gaps[g];
    if (gap && gap[0] === i) {
      out.push(gaps.length === 1 ? full : formatGap(gap[1] - gap[0], unit));
      i = gap[1];
      g++;
    } else out.push(lines[i++]!);
  }
  if (opts.index && opts.index.length > 0) {
    if (gaps.length === 1) out.splice(out.indexOf(full), 0, formatIndex(opts.index));
    else out.push(formatIndex(opts.index));
  }
  if (gaps.length > 1) out.push(full);
  return out.join('\n');
}

/**
 * Lossless: runs of identical lines (3 or more) become the line plus a repeat
 * note. Returns the lines unchanged when nothing repeats.
 */
export function collapseRepeats(lines: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < lines.length; ) {
    let j = i + 1;
    while (j < lines.length && lines[j] === lines[i]) j++;
    const run = j - i;
    out.push(lines[i]!);
    if (run >= 3 && !isBlank(lines[i]!)) out.push(formatRepeat(run - 1));
    else for (let k = 1; k < run; k++) out.push(lines[i]!);
    i = j;
  }
  return out;
}

/**
 * `line` without trailing spaces, tabs and CRs. A loop, not `/[ \t\r]+$/`:
 * the regex retried from every blank of a long inner run (quadratic).
 */
export function trimTrailingBlanks(line: string): string {
  let end = line.length;
  for (let c = line.charCodeAt(end - 1); c === 32 || c === 9 || c === 13; c = line.charCodeAt(end - 1))
    end -= 1;
  return end === line.length ? line : line.slice(0, end);
}

/** Lossless whitespace cleanup: trailing spaces, runs of blank lines. */
export function tidyLines(lines: readonly string[]): string[] {
  const out: string[] = [];
  let blanks = 0;
  for (const raw of lines) {
    const line = trimTrailingBlanks(raw);
    if (line === '') {
      if (++blanks > 1) continue;
    } else blanks = 0;
    out.push(line);
  }
  return out;
}

/** The lines as shown: each very long one shortened (`shortenLine`); `lines` itself when none is. */
export function shortenedLines(lines: string[]): string[] {
  for (const l of lines) if (l.length > LONG_LINE_CHARS) return lines.map(shortenLine);
  return lines;
}

/** A very long line shows its start and end, with a note in between (lossy). */
export function shortenLine(line: string): string {
  if (line.length <= LONG_LINE_CHARS) return line;
  const head = Math.round(LONG_LINE_CHARS * 0.7);
  const tail = Math.round(LONG_LINE_CHARS * 0.2);
  return `${line.slice(0, head)} ${formatGap(line.length - head - tail, 'chars')} ${line.slice(-tail)}`;
}

/** Shortest run of lines, all shown earlier in the conversation, that is replaced by a note. */
const MIN_REPEATED_RUN = 4;
/** A single line at least this long that was shown earlier also counts as a repeated run. */
const LONG_REPEATED_LINE = 200;

/**
 * Marks every run of at least `MIN_REPEATED_RUN` lines whose substantial
 * lines (at least 3 of them) all occurred earlier in the conversation, and
 * every long line shown earlier: a file read again after an edit, a file the
 * agent wrote itself, instructions pasted into every message.
 */
export function markRepeatedRuns(lines: readonly string[], earlier: KnownLines): Uint8Array {
  const n = lines.length;
  const mask = new Uint8Array(n);
  if (earlier.size === 0) return mask;
  // each line's key looked up once (the runs below visit lines more than once)
  const state = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const line = lines[i]!;
    // a line shorter than a key cannot give one
    if (line.length < MIN_LINE_CHARS) continue;
    const key = lineKey(line);
    if (key.length < MIN_LINE_CHARS) continue;
    state[i] = !earlier.has(key) ? NEW_LINE : key.length >= LONG_REPEATED_LINE ? LONG_KNOWN_LINE : KNOWN_LINE;
  }
  for (let i = 0; i < n; ) {
    const start = i;
    let known = 0;
    let longKnown = false;
    for (; i < n; i++) {
      const s = state[i]!;
      if (s === SHORT_LINE) continue;
      if (s === NEW_LINE) break;
      known++;
      if (s === LONG_KNOWN_LINE) longKnown = true;
    }
    // trailing short lines belong to whatever follows, not to this run
    let end = i;
    while (end > start && state[end - 1] === SHORT_LINE) end--;
    if ((end - start >= MIN_REPEATED_RUN && known >= 3) || longKnown) mask.fill(1, start, end);
    if (i === start) i++;
  }
  return mask;
}

/** What `markRepeatedRuns` knows of a line: too short for a key, not shown earlier, shown earlier (long). */
const SHORT_LINE = 0;
const NEW_LINE = 1;
const KNOWN_LINE = 2;
const LONG_KNOWN_LINE = 3;

/**
 * The label a task runner puts before every line of a task's output:
 * `pkg:task: ` (turbo), `pkg task: ` (pnpm -r), `name  | ` (docker compose).
 * The task segment starts with a letter, so `file.ts:12: ` (grep) is no label.
 */
const TASK_LABEL_RE = /^(?:[\w@][\w@./-]*(?::| )[A-Za-z][\w.-]*: ?|[\w@][\w@./-]*\s*\| ?)/;
/** A label counts when it recurs on this many lines... */
const MIN_LABEL_LINES = 3;
/** ...and labelled lines make up at least this share of the non-blank lines. */
const MIN_LABEL_SHARE = 0.5;

/**
 * `lines` without the task runner labels that prefix them (see
 * `TASK_LABEL_RE`), for classification only: behind a label, a test run's
 * levels, stack frames and results are not at the start of the line where
 * detectors look. Returns `lines` itself when they carry no recurring label.
 */
export function withoutTaskLabels(lines: string[]): string[] {
  const counts = new Map<string, number>();
  let nonBlank = 0;
  let unlabelled = 0;
  for (const line of lines) {
    if (isBlank(line)) continue;
    nonBlank++;
    const label = taskLabel(line);
    if (!label) {
      // settled: the labelled lines can no longer make `MIN_LABEL_SHARE` of the non-blank ones
      if (++unlabelled > lines.length * (1 - MIN_LABEL_SHARE)) return lines;
      continue;
    }
    const key = label.trimEnd();
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const labels = new Set<string>();
  let labelled = 0;
  for (const [label, n] of counts)
    if (n >= MIN_LABEL_LINES) {
      labels.add(label);
      labelled += n;
    }
  if (labels.size === 0 || labelled < nonBlank * MIN_LABEL_SHARE) return lines;
  return lines.map((line) => {
    const label = taskLabel(line);
    return label && labels.has(label.trimEnd()) ? line.slice(label.length) : line;
  });
}

/** The task label `line` starts with, or undefined. Every label starts with one of `[\w@]`. */
function taskLabel(line: string): string | undefined {
  const c = line.charCodeAt(0);
  if (!(c < 128 && LABEL_START[c] === 1)) return undefined;
  return TASK_LABEL_RE.exec(line.length > 200 ? line.slice(0, 200) : line)?.[0];
}

/** `[\w@]` by character code. */
const LABEL_START = new Uint8Array(128);
for (let c = 0; c < 128; c++) if (/[\w@]/.test(String.fromCharCode(c))) LABEL_START[c] = 1;
