/**
 * Identifiers: the ID-like strings (paths, names with digits, dotted names,
 * hashes, pod names, reservation codes) that agents copy out of tool output
 * into their next call. Compressors keep the lines and items that carry them.
 */

/**
 * Identifier characters (`[A-Za-z0-9_.:/@#-]`), and those that mark a run as
 * ID-like rather than a plain word (`[0-9/_.:]`), by character code.
 */
export const ID_CHAR = 1;
export const ID_MARK = 2;
/** An identifier character an identifier does not end with (`TRAILING_CHARS`). */
export const ID_TRAILING = 4;
/** Punctuation an identifier does not end with (left out when a run ends with it). */
export const TRAILING_CHARS = '.:,;@#-';
/** Class bits (`ID_CHAR`, `ID_MARK`, `ID_TRAILING`) of each ASCII character. */
export const ID_CLASS = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  if (/[A-Za-z0-9_.:/@#-]/.test(ch))
    ID_CLASS[c] =
      ID_CHAR | (/[0-9/_.:]/.test(ch) ? ID_MARK : 0) | (TRAILING_CHARS.includes(ch) ? ID_TRAILING : 0);
}
/** Shortest identifier. */
export const MIN_ID = 5;

/** The identifier `nextIdentifier` found last: its start and end in its text, and a 32-bit hash of its characters. */
export const IDENTIFIER_SPAN = new Int32Array(3);

/**
 * The next identifier of `text` at or after `at`: a maximal run of identifier
 * characters, trailing punctuation left out, of at least `MIN_ID` that holds
 * a mark (what `extractIdentifiers` lists). Its span and a hash of its
 * characters (for counting without cutting it out, `select.ts`) go to
 * `IDENTIFIER_SPAN`; returns where the next one may start, or -1 when there
 * is none. One pass over the character codes.
 */
export function nextIdentifier(text: string, at: number): number {
  const n = text.length;
  let i = at;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c >= 128 || ID_CLASS[c] === 0) {
      i++;
      continue;
    }
    const start = i;
    let keep = i;
    let marks = 0;
    let keepMarks = 0;
    let h = 0x811c9dc5 | 0;
    let keepHash = h;
    for (; i < n; i++) {
      const k = text.charCodeAt(i);
      const cls = k < 128 ? ID_CLASS[k]! : 0;
      if (cls === 0) break;
      marks |= cls;
      h = Math.imul(h ^ k, 0x01000193);
      if ((cls & ID_TRAILING) === 0) {
        keep = i + 1;
        keepMarks = marks;
        keepHash = h;
      }
    }
    if (keep - start >= MIN_ID && (keepMarks & ID_MARK) !== 0) {
      IDENTIFIER_SPAN[0] = start;
      IDENTIFIER_SPAN[1] = keep;
      IDENTIFIER_SPAN[2] = keepHash ^ (keepHash >>> 15);
      return i;
    }
  }
  return -1;
}

/**
 * Identifier-like strings of a text, trailing punctuation removed, in order of
 * appearance: maximal runs of at least 5 identifier characters
 * (`[A-Za-z0-9_.:/@#-]{5,}`) that hold one of `[0-9/_.:]` (`nextIdentifier`).
 */
export function extractIdentifiers(text: string): string[] {
  const out: string[] = [];
  for (let at = nextIdentifier(text, 0); at >= 0; at = nextIdentifier(text, at))
    out.push(text.slice(IDENTIFIER_SPAN[0]!, IDENTIFIER_SPAN[1]!));
  return out;
}

/** A number with a unit (`12ms`, `1.5s`, `300KB`, `42%`): a measurement, not a name. */
const QUANTITY_RE = /^\d+(?:\.\d+)?(?:[nµu]?s|ms|sec|secs|min|mins|[hdm]|[kmgtp]i?b|b|bytes|kbps|mbps|%|x)$/i;

/**
 * True when an identifier names something (a path, a code, a dotted name, a
 * version, a date or time) rather than being a bare number: `:12437` or
 * `4.50` cut from a JSON value is not a name a reader can look for.
 */
export function isNameLike(id: string): boolean {
  let start = 0;
  while (start < id.length && LEADING_CHARS.includes(id[start]!)) start++;
  if (id.length - start < 5) return false;
  // both patterns start with a digit: a core that does not is a name
  const c = id.charCodeAt(start);
  if (c < 48 || c > 57) return true;
  const core = id.slice(start);
  return !/^\d+(?:\.\d+)?$/.test(core) && !QUANTITY_RE.test(core);
}

/** What a name-like identifier's core does not start with (left out before it is judged). */
const LEADING_CHARS = '.:,;@#/-';

/**
 * `run` without its trailing punctuation. A loop, not `/[.:,;@#-]+$/`: the
 * regex retried from every character of a long punctuation run (quadratic).
 */
function withoutTrailing(run: string): string {
  let end = run.length;
  while (end > 0 && TRAILING_CHARS.includes(run[end - 1]!)) end -= 1;
  return run.slice(0, end);
}

/** Words of a user message that name something specific: codes, numbers, paths, quoted names. */
const TERM_RE = /[A-Za-z0-9_.:/@#-]{3,}/g;
const CODE_LIKE_RE = /^(?=.*\d)[A-Za-z0-9_.:/@#-]+$|^[A-Z][A-Z0-9_]{3,}$|[/_.:]/;

/**
 * Terms of a user message that compressors match items against: ID-like
 * runs, codes mixing letters and digits, ALL-CAPS names, and quoted strings.
 * Plain words are left out: they match too much to be a signal.
 */
export function extractUserTerms(text: string): string[] {
  const terms = new Set<string>();
  for (const m of text.matchAll(TERM_RE)) {
    const run = withoutTrailing(m[0]);
    if (run.length >= 3 && CODE_LIKE_RE.test(run)) terms.add(run);
  }
  for (const m of text.matchAll(/["'`]([^"'`\n]{3,60})["'`]/g)) terms.add(m[1]!);
  return [...terms];
}

/** True when `text` contains any of `terms` (case-sensitive, as identifiers are). */
export function mentionsAny(text: string, terms: readonly string[]): boolean {
  for (const t of terms) if (text.includes(t)) return true;
  return false;
}
