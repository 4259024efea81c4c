import { extractIdentifiers, isNameLike } from '../identifiers.js';
import type { KnownNames } from '../known.js';
import { approxTokens, isBlank } from './lines.js';

/**
 * Identifiers that change on every line (full timestamps, UUIDs, decimal
 * measurements, short numbers) say little about which line matters; novelty
 * and the omitted-part index ignore them. Dates, times, versions, hashes and
 * long numeric ids stay: agents copy those.
 */
const VOLATILE_RE =
  /^(?:\d{4}-\d\d-\d\d[T ]\d\d:\d\d[\d:.,]*(?:Z|[+-]\d\d:?\d\d)?|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\d+\.\d+(?:e[+-]?\d+)?|\d{1,5})$/i;

const NO_IDS: readonly string[] = [];

/**
 * Identifiers of a line that are stable names, not per-line noise. Found
 * again when asked again (a selection asks of most lines twice: for new
 * names, then for the omitted part's index): a call-scoped map of lines to
 * their lists cost more than the second scan, each new line hashed by V8 to
 * be looked up (two servers taking turns on new ~91k conversations: ~0.25 ms
 * less before forwarding without the map, docs/perf.md).
 */
export function stableIdentifiers(line: string): readonly string[] {
  if (line.length < 5) return NO_IDS;
  return stableOf(line);
}

function stableOf(line: string): readonly string[] {
  const ids = extractIdentifiers(line);
  if (ids.length === 0) return NO_IDS;
  return ids.filter(isStable);
}

// callbacks are module functions, not closures made per call: see json-walk.ts
function isStable(id: string): boolean {
  return !VOLATILE_RE.test(id);
}

function unitCost(line: string): number {
  return approxTokens(line) + 1;
}

/** Most new identifiers first; ties to the earlier unit. */
function byFreshness(a: readonly [number, number], b: readonly [number, number]): number {
  return b[1] - a[1] || a[0] - b[0];
}

/** Most frequent first (a stable sort keeps ties in order). */
function byCount(a: readonly [string, number], b: readonly [string, number]): number {
  return b[1] - a[1];
}

/** Estimated cost of the note that replaces a gap. */
const NOTE_COST = 6;

/**
 * A selection of lines (or items) under a token cap. Units are taken in the
 * order the caller asks, each only if it still fits; `force` takes it anyway
 * (the head and tail of a text). Each new run of kept units is charged the
 * cost of the gap note that will separate it from the previous one.
 */
export class Selection {
  readonly keep: Uint8Array;
  private readonly blocked: Uint8Array;
  used = 0;
  constructor(
    private readonly costs: readonly number[],
    readonly cap: number,
  ) {
    this.keep = new Uint8Array(costs.length);
    this.blocked = new Uint8Array(costs.length);
  }

  /** Makes units unavailable (already shown earlier in the conversation); even `force` skips them. */
  block(mask: Uint8Array): void {
    for (let i = 0; i < mask.length; i++) if (mask[i]) this.blocked[i] = 1;
  }

  static ofLines(lines: readonly string[], cap: number): Selection {
    return new Selection(lines.map(unitCost), cap);
  }

  private price(i: number): number {
    const opensRun = !(this.keep[i - 1] ?? 0) && !(this.keep[i + 1] ?? 0);
    return this.costs[i]! + (opensRun ? NOTE_COST : 0);
  }

  /** Keeps unit i if it fits (or `force`); returns whether it is kept. */
  take(i: number, force = false): boolean {
    if (i < 0 || i >= this.costs.length) return false;
    if (this.keep[i]) return true;
    if (this.blocked[i]) return false;
    const cost = this.price(i);
    if (!force && this.used + cost > this.cap) return false;
    this.keep[i] = 1;
    this.used += cost;
    return true;
  }

  /** Keeps units [from, to) that fit. */
  takeRange(from: number, to: number, force = false): void {
    for (let i = Math.max(0, from); i < Math.min(this.costs.length, to); i++) this.take(i, force);
  }

  get full(): boolean {
    return this.used >= this.cap;
  }
}

/**
 * Keeps, while they fit, the units that introduce identifiers not seen before
 * (in the conversation, or in units kept so far), most new identifiers first;
 * ties go to the earlier unit, so the result is deterministic.
 */
export function keepNovel(texts: readonly string[], sel: Selection, seen: KnownNames): void {
  if (sel.full) return;
  const known = new Set<string>();
  const ids: (readonly string[])[] = [];
  for (const t of texts) ids.push(stableIdentifiers(t));
  for (let i = 0; i < texts.length; i++) if (sel.keep[i]) for (const id of ids[i]!) known.add(id);
  const candidates: Array<[number, number]> = [];
  for (let i = 0; i < texts.length; i++) {
    if (sel.keep[i]) continue;
    const fresh = countFresh(ids[i]!, seen, known);
    if (fresh > 0) candidates.push([i, fresh]);
  }
  candidates.sort(byFreshness);
  for (const [i] of candidates) {
    if (sel.full) break;
    if (allKnown(ids[i]!, seen, known)) continue;
    if (sel.take(i)) for (const id of ids[i]!) known.add(id);
  }
}

function allKnown(ids: readonly string[], seen: KnownNames, known: ReadonlySet<string>): boolean {
  for (const id of ids) if (!seen.has(id) && !known.has(id)) return false;
  return true;
}

/** Distinct identifiers of `ids` in neither set. */
function countFresh(ids: readonly string[], seen: KnownNames, known: ReadonlySet<string>): number {
  // a line names a few identifiers: finding repeats by comparison costs less than a set
  if (ids.length > 16) return new Set(ids.filter((id) => !seen.has(id) && !known.has(id))).size;
  let fresh = 0;
  for (let k = 0; k < ids.length; k++) {
    const id = ids[k]!;
    if (seen.has(id) || known.has(id) || ids.indexOf(id) < k) continue;
    fresh++;
  }
  return fresh;
}

/** Keeps an even spread of the remaining non-blank units while they fit. */
export function keepSpread(texts: readonly string[], sel: Selection): void {
  if (sel.full) return;
  const rest: number[] = [];
  for (let i = 0; i < texts.length; i++) if (!sel.keep[i] && !isBlank(texts[i]!)) rest.push(i);
  if (rest.length === 0) return;
  const avg = rest.reduce((n, i) => n + approxTokens(texts[i]!) + 1, 0) / rest.length;
  const room = Math.floor((sel.cap - sel.used) / Math.max(1, avg));
  if (room <= 0) return;
  const step = rest.length / Math.min(room, rest.length);
  for (let k = 0; k * step < rest.length; k++) sel.take(rest[Math.floor(k * step)]!);
}

/**
 * The index of an omitted part: name-like identifiers (`isNameLike`: no bare
 * numbers) that occur only in units not kept and nowhere earlier in the conversation, most frequent first (ties:
 * first appearance), while they fit in `maxTokens`. A kept unit shown
 * shortened (`shownTexts`) contributes the names of its omitted middle. It tells the reader which
 * names the omitted part holds, so it knows when to retrieve it.
 */
export function omittedIdentifiers(
  texts: readonly string[],
  keep: Uint8Array,
  seen: KnownNames,
  maxTokens: number,
  shownTexts: readonly string[] = texts,
): string[] {
  return omittedIdentifiersExcept(texts, keep, seen, NO_NAMES, maxTokens, shownTexts);
}

const NO_NAMES: ReadonlySet<string> = new Set();

/**
 * `omittedIdentifiers` where the names in `alsoSeen` count as seen earlier
 * too (looked up in both sets: the conversation's is not copied).
 */
export function omittedIdentifiersExcept(
  texts: readonly string[],
  keep: Uint8Array,
  seen: KnownNames,
  alsoSeen: ReadonlySet<string>,
  maxTokens: number,
  shownTexts: readonly string[] = texts,
): string[] {
  // occurrences of each identifier in what is omitted, judged once: 0 for one that does not count
  const counts = new Map<string, number>();
  for (let i = 0; i < texts.length; i++) {
    if (keep[i] && shownTexts[i] === texts[i]) continue;
    for (const id of stableIdentifiers(texts[i]!)) {
      const n = counts.get(id);
      if (n === undefined) counts.set(id, seen.has(id) || alsoSeen.has(id) || !isNameLike(id) ? 0 : 1);
      else if (n > 0) counts.set(id, n + 1);
    }
  }
  // nor does one the kept units show (looked up, not collected: most of theirs are not in `counts`)
  for (let i = 0; i < texts.length; i++) {
    if (!keep[i]) continue;
    for (const id of stableIdentifiers(shownTexts[i]!)) if (counts.get(id)) counts.set(id, 0);
  }
  // most frequent first; ties in order of first appearance (the sort is stable)
  const ranked: Array<[string, number]> = [];
  for (const [id, n] of counts) if (n > 0) ranked.push([id, n]);
  ranked.sort(byCount);
  const out: string[] = [];
  let used = 0;
  for (const [id] of ranked) {
    const cost = approxTokens(id) + 1;
    if (used + cost > maxTokens) continue;
    out.push(id);
    used += cost;
  }
  return out;
}
