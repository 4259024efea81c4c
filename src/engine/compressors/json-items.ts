import { mentionsAny } from '../identifiers.js';
import { JSON_EDGE_ITEMS } from '../settings.js';
import { approxTokens } from './lines.js';
import { keepNovel, keepSpread, Selection } from './select.js';
import type { CompressContext } from './types.js';

const ERROR_FIELD_RE =
  /"(?:error|errors|err|exception|failure|failed|fault)":\s*(?!null|false|\[\]|\{\}|""|0\b)/i;
const ERROR_STATUS_RE =
  /"(?:status|state|result|conclusion|outcome|level|severity|phase)":\s*"(?:error|errored|failed|failure|fatal|critical|cancell?ed|timed_out|timeout|rejected|denied|crashloopbackoff|unhealthy)"/i;
const ERROR_CODE_RE =
  /"(?:status|statusCode|status_code|code|http_status)":\s*[45]\d\d\b|"level":\s*(?:50|60)\b/;

/** The two case-insensitive patterns in one, so an item is scanned twice, not three times. */
const ERROR_FIELD_OR_STATUS_RE = new RegExp(`${ERROR_FIELD_RE.source}|${ERROR_STATUS_RE.source}`, 'i');

/** True when an item reports an error or failure. */
export function isErrorItem(text: string): boolean {
  return ERROR_FIELD_OR_STATUS_RE.test(text) || ERROR_CODE_RE.test(text);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Keeps items whose numeric fields are outliers (beyond 3 standard deviations) or jump sharply. */
function markNumericSignals(records: readonly Record<string, unknown>[], keep: Uint8Array): void {
  const n = records.length;
  const keys = new Set<string>();
  for (const r of records) for (const k of Object.keys(r)) if (typeof r[k] === 'number') keys.add(k);
  for (const k of keys) {
    // loops, not closures made per call: see json-walk.ts
    const vals: number[] = [];
    for (const r of records) vals.push(typeof r[k] === 'number' ? (r[k] as number) : Number.NaN);
    const present: number[] = [];
    for (const v of vals) if (Number.isFinite(v)) present.push(v);
    if (present.length < Math.max(8, n * 0.8)) continue;
    let sum = 0;
    for (const v of present) sum += v;
    const mean = sum / present.length;
    let squares = 0;
    for (const v of present) squares += (v - mean) ** 2;
    const sd = Math.sqrt(squares / present.length);
    if (sd === 0) continue;
    let diffSum = 0;
    for (let i = 1; i < n; i++)
      if (Number.isFinite(vals[i]!) && Number.isFinite(vals[i - 1]!))
        diffSum += Math.abs(vals[i]! - vals[i - 1]!);
    const meanDiff = diffSum / Math.max(1, n - 1);
    for (let i = 0; i < n; i++) {
      const v = vals[i]!;
      if (!Number.isFinite(v)) continue;
      if (Math.abs(v - mean) > 3 * sd) keep[i] = 1;
      const prev = vals[i - 1];
      if (prev !== undefined && Number.isFinite(prev) && meanDiff > 0 && Math.abs(v - prev) > 5 * meanDiff)
        keep[i] = 1;
    }
  }
}

/**
 * A field's value as a string to compare: `String(v)`, which throws for an
 * object whose `toString` field is not a function (`{"toString": 1}`, valid
 * JSON): such a value compares by its JSON instead.
 */
function valueKey(v: unknown): string {
  try {
    return String(v);
  } catch {
    return `\u0000${JSON.stringify(v)}`;
  }
}

/** Keeps items where a low-cardinality field (a status, a flag) changes value. */
function markChangePoints(records: readonly Record<string, unknown>[], keep: Uint8Array): void {
  const n = records.length;
  const keys = new Set<string>();
  for (const r of records)
    for (const k of Object.keys(r)) if (typeof r[k] === 'string' || typeof r[k] === 'boolean') keys.add(k);
  for (const k of keys) {
    const vals: string[] = [];
    for (const r of records) vals.push(valueKey(r[k]));
    if (new Set(vals).size > Math.max(2, n / 5)) continue;
    const changes: number[] = [];
    for (let i = 1; i < n; i++) if (vals[i] !== vals[i - 1]) changes.push(i);
    if (changes.length === 0 || changes.length > n / 4) continue;
    for (const i of changes) keep[i] = 1;
  }
}

/** Which items of an array `selectItems` keeps, and how many error items it has and keeps. */
export interface ItemSelection {
  keep: Uint8Array;
  /** Error items in the array. */
  errors: number;
  /** Error items kept (`errors` when they all fit). */
  errorsKept: number;
  /** Items naming a term of the latest user message, and how many of them are kept. */
  named: number;
  namedKept: number;
}

/**
 * Chooses the items of a JSON array to keep under a cap of `cap` tokens. In
 * priority order: items naming a term of the latest user message (kept even
 * past the cap, up to the cap again); the first and last item; error items
 * while they fit; outliers and change points; the first and last
 * `JSON_EDGE_ITEMS`; items that introduce new identifiers; an even spread.
 * The counts it returns are what the selection holds, for the marker.
 * `texts` are the items' JSON, when the caller has written them already.
 */
export function selectItems(
  items: readonly unknown[],
  ctx: CompressContext,
  cap: number,
  texts: readonly string[] = items.map((it) => JSON.stringify(it) ?? 'null'),
): ItemSelection {
  const n = items.length;
  const sel = new Selection(
    texts.map((t) => approxTokens(t) + 1),
    cap,
  );
  const named: number[] = [];
  const errorItems: number[] = [];
  for (let i = 0; i < n; i++) {
    if (ctx.userTerms.length > 0 && mentionsAny(texts[i]!, ctx.userTerms)) named.push(i);
    if (isErrorItem(texts[i]!)) errorItems.push(i);
  }
  // what the user asked about comes first, even past the cap (up to the cap again)
  for (const i of named) if (sel.used <= sel.cap) sel.take(i, true);
  sel.take(0, true);
  sel.take(n - 1, true);
  for (const i of errorItems) sel.take(i);
  const records = items.filter(isRecord);
  if (records.length === n) {
    const signals = new Uint8Array(n);
    markNumericSignals(records, signals);
    markChangePoints(records, signals);
    for (let i = 0; i < n; i++) if (signals[i]) sel.take(i);
  }
  sel.takeRange(0, JSON_EDGE_ITEMS);
  sel.takeRange(n - JSON_EDGE_ITEMS, n);
  keepNovel(texts, sel, ctx.seen);
  keepSpread(texts, sel);
  const kept = (list: readonly number[]) => list.filter((i) => sel.keep[i]).length;
  return {
    keep: sel.keep,
    errors: errorItems.length,
    errorsKept: kept(errorItems),
    named: named.length,
    namedKept: kept(named),
  };
}
