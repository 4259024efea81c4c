/**
 * Identifiers: the ID-like strings (paths, names with digits, dotted names,
 * hashes, pod names, reservation codes) that agents copy out of tool output
 * into their next call. Compressors keep the lines and items that carry them.
 */

import { LRUCache } from 'lru-cache';
import { contentHash } from './hash.js';
import { ENTRY_OVERHEAD, engineMemoLimit, registerEngineMemo } from './memo-budget.js';

/** A maximal run of identifier characters. */
const RUN_RE = /[A-Za-z0-9_.:/@#-]{5,}/g;
/** What makes a run ID-like rather than a plain word. */
const ID_MARK_RE = /[0-9/_.:]/;

/** Identifier-like strings of a text, trailing punctuation removed, in order of appearance. */
export function extractIdentifiers(text: string): string[] {
  const out: string[] = [];
  RUN_RE.lastIndex = 0;
  for (let m = RUN_RE.exec(text); m !== null; m = RUN_RE.exec(text)) {
    let run = m[0];
    if (TRAILING_CHARS.includes(run[run.length - 1]!)) {
      run = withoutTrailing(run);
      if (run.length < 5) continue;
    }
    if (ID_MARK_RE.test(run)) out.push(run);
  }
  return out;
}

const TRAILING_CHARS = '.:,;@#-';

/** A number with a unit (`12ms`, `1.5s`, `300KB`, `42%`): a measurement, not a name. */
const QUANTITY_RE = /^\d+(?:\.\d+)?(?:[nµu]?s|ms|sec|secs|min|mins|[hdm]|[kmgtp]i?b|b|bytes|kbps|mbps|%|x)$/i;

/**
 * True when an identifier names something (a path, a code, a dotted name, a
 * version, a date or time) rather than being a bare number: `:12437` or
 * `4.50` cut from a JSON value is not a name a reader can look for.
 */
export function isNameLike(id: string): boolean {
  const core = id.replace(/^[.:,;@#/-]+/, '');
  return core.length >= 5 && !/^\d+(?:\.\d+)?$/.test(core) && !QUANTITY_RE.test(core);
}

/**
 * `run` without its trailing punctuation. A loop, not `/[.:,;@#-]+$/`: the
 * regex retried from every character of a long punctuation run (quadratic).
 */
function withoutTrailing(run: string): string {
  let end = run.length;
  while (end > 0 && TRAILING_CHARS.includes(run[end - 1]!)) end -= 1;
  return run.slice(0, end);
}
/**
 * Identifier lists of long texts, by content hash: history is rescanned on
 * every request. Each list is kept joined into one string of its own: the
 * matches themselves are V8 substrings that keep the whole text they were cut
 * from alive, and 20,000 kept lists held every tool output of the last
 * hundreds of conversations (issue 19). Bounded by the bytes kept (the
 * server's share of `--memo-max-bytes`, see memo-budget.ts).
 */
let cache = createCache(engineMemoLimit('identifiers'));

function createCache(maxBytes: number): LRUCache<string, string> {
  // identifiers and hashes are ASCII: one byte a character
  return new LRUCache<string, string>({
    maxSize: maxBytes,
    sizeCalculation: (ids, key) => ids.length + key.length + 2 * 16 + ENTRY_OVERHEAD,
  });
}

registerEngineMemo('identifiers', {
  bytes: () => cache.calculatedSize,
  limit(maxBytes) {
    if (maxBytes !== cache.maxSize) cache = createCache(maxBytes);
  },
});
const CACHE_MIN_LENGTH = 1024;
/** Identifiers are runs of `RUN_RE`'s characters: no line break in one. */
const JOIN = '\n';

/** Adds the identifiers of `text` to `into`. */
export function collectIdentifiers(text: string, into: Set<string>): void {
  let ids: string[];
  if (text.length >= CACHE_MIN_LENGTH) {
    const key = contentHash(text);
    const joined = cache.get(key);
    if (joined === undefined) {
      ids = extractIdentifiers(text);
      const value = ids.join(JOIN);
      if (value.length < 256 * 1024) cache.set(key, value);
      // the set keeps the copies cut from `value`, not substrings of `text`
      if (value !== '') ids = value.split(JOIN);
    } else ids = joined === '' ? [] : joined.split(JOIN);
  } else ids = extractIdentifiers(text);
  for (const id of ids) into.add(id);
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
