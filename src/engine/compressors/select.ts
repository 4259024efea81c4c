import { extractIdentifiers, IDENTIFIER_SPAN, isNameLike, MIN_ID, nextIdentifier } from '../identifiers.js';
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
  // every volatile form starts with a hexadecimal digit: an identifier that does not is stable
  const c = id.charCodeAt(0) | 0x20;
  if ((c < 0x30 || c > 0x39) && (c < 0x61 || c > 0x66)) return true;
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

/** The count of an identifier that never counts (a volatile one). */
const IGNORED = -1;

/**
 * `omittedIdentifiers` where the names in `alsoSeen` count as seen earlier
 * too (looked up in both sets: the conversation's is not copied).
 *
 * Occurrences are found and counted where they are in the text
 * (`IdentifierCounts`): an identifier is cut out of its line and judged
 * (stable, name-like, seen before) the first time it occurs only, not at
 * each occurrence as a string of its own.
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
  const counts = new IdentifierCounts();
  for (let i = 0; i < texts.length; i++) {
    if (keep[i] && shownTexts[i] === texts[i]) continue;
    const text = texts[i]!;
    if (text.length < MIN_ID) continue;
    for (let at = nextIdentifier(text, 0); at >= 0; at = nextIdentifier(text, at)) {
      const k = counts.find(text);
      if (k >= 0) {
        if (counts.count[k]! > 0) counts.count[k]! += 1;
        continue;
      }
      const id = text.slice(IDENTIFIER_SPAN[0]!, IDENTIFIER_SPAN[1]!);
      // a volatile one is never counted, as `stableIdentifiers` leaves it out
      const n = !isStable(id) ? IGNORED : seen.has(id) || alsoSeen.has(id) || !isNameLike(id) ? 0 : 1;
      counts.add(-1 - k, id, n);
    }
  }
  // nor does one the kept units show (looked up, not collected: most of theirs are not in `counts`)
  for (let i = 0; i < texts.length; i++) {
    if (!keep[i]) continue;
    const text = shownTexts[i]!;
    if (text.length < MIN_ID) continue;
    for (let at = nextIdentifier(text, 0); at >= 0; at = nextIdentifier(text, at)) {
      const k = counts.find(text);
      if (k >= 0 && counts.count[k]! > 0) counts.count[k] = 0;
    }
  }
  // most frequent first; ties in order of first appearance (the sort is stable)
  const ranked: Array<[string, number]> = [];
  for (let k = 0; k < counts.ids.length; k++)
    if (counts.count[k]! > 0) ranked.push([counts.ids[k]!, counts.count[k]!]);
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

/**
 * Identifiers found by `nextIdentifier`, counted: an open-addressing table
 * of their hashes and entries, the entries in order of first occurrence. A
 * span matches an entry when its characters are the entry's (compared in
 * place): exact, like a `Map` of the strings.
 */
class IdentifierCounts {
  /** Per slot: the hash, and 1 + the entry's index (0: empty). */
  private slots = new Int32Array(2 * 256);
  readonly ids: string[] = [];
  readonly count: number[] = [];

  /** The entry of the identifier in `IDENTIFIER_SPAN` (of `text`), or -1 - the slot where it would go. */
  find(text: string): number {
    const start = IDENTIFIER_SPAN[0]!;
    const length = IDENTIFIER_SPAN[1]! - start;
    const h = IDENTIFIER_SPAN[2]!;
    const { slots } = this;
    const mask = (slots.length >> 1) - 1;
    for (let s = h & mask; ; s = (s + 1) & mask) {
      const entry = slots[2 * s + 1]!;
      if (entry === 0) return -1 - s;
      if (slots[2 * s] !== h) continue;
      const id = this.ids[entry - 1]!;
      if (id.length === length && text.startsWith(id, start)) return entry - 1;
    }
  }

  /** Adds `id` (the identifier in `IDENTIFIER_SPAN`) at `slot`, with count `n`. */
  add(slot: number, id: string, n: number): void {
    this.ids.push(id);
    this.count.push(n);
    this.slots[2 * slot] = IDENTIFIER_SPAN[2]!;
    this.slots[2 * slot + 1] = this.ids.length;
    if (4 * this.ids.length >= this.slots.length) this.grow();
  }

  private grow(): void {
    const old = this.slots;
    const slots = new Int32Array(2 * old.length);
    const mask = (slots.length >> 1) - 1;
    for (let k = 0; k < old.length; k += 2) {
      if (old[k + 1] === 0) continue;
      let s = old[k]! & mask;
      while (slots[2 * s + 1] !== 0) s = (s + 1) & mask;
      slots[2 * s] = old[k]!;
      slots[2 * s + 1] = old[k + 1]!;
    }
    this.slots = slots;
  }
}
