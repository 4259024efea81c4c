import { extractIdentifiers } from '../identifiers.js';
import { approxTokens } from './lines.js';

/**
 * Identifiers that change on every line (timestamps, UUIDs, long hex ids,
 * plain numbers) say little about which line matters; novelty ignores them.
 */
const VOLATILE_RE =
  /^(?:\d[\d.:,T+-]*Z?|[0-9a-f]{16,}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\d{4}-\d\d-\d\d[T ]\d\d:\d\d[\d:.]*Z?)$/i;

/** Identifiers of a line that are stable names, not per-line noise. */
export function stableIdentifiers(line: string): string[] {
  return extractIdentifiers(line).filter((id) => !VOLATILE_RE.test(id));
}

/** Token budget of a selection: what lines kept beyond the mandatory ones may cost. */
export class LineBudget {
  used = 0;
  readonly limit: number;
  constructor(
    extra: number,
    private readonly lines: readonly string[],
    private readonly keep: Uint8Array,
  ) {
    for (let i = 0; i < lines.length; i++) if (keep[i]) this.used += approxTokens(lines[i]!) + 1;
    this.limit = this.used + extra;
  }
  /** Keeps line i if it fits (or `force`); returns whether it is kept. */
  take(i: number, force = false): boolean {
    if (this.keep[i]) return true;
    const cost = approxTokens(this.lines[i]!) + 1;
    if (!force && this.used + cost > this.limit) return false;
    this.keep[i] = 1;
    this.used += cost;
    return true;
  }
  get full(): boolean {
    return this.used >= this.limit;
  }
}

/**
 * Keeps, within the budget, the lines that introduce identifiers not seen
 * before (in the conversation, or in lines kept so far), most new identifiers
 * first. Ties go to the earlier line, so the result is deterministic.
 */
export function keepNovelLines(
  lines: readonly string[],
  budget: LineBudget,
  keep: Uint8Array,
  seen: ReadonlySet<string>,
): void {
  const known = new Set<string>();
  const ids: string[][] = lines.map((l) => stableIdentifiers(l));
  for (let i = 0; i < lines.length; i++) if (keep[i]) for (const id of ids[i]!) known.add(id);
  const candidates: Array<[number, number]> = [];
  for (let i = 0; i < lines.length; i++) {
    if (keep[i]) continue;
    const fresh = new Set(ids[i]!.filter((id) => !seen.has(id) && !known.has(id))).size;
    if (fresh > 0) candidates.push([i, fresh]);
  }
  candidates.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  for (const [i] of candidates) {
    if (budget.full) break;
    if (ids[i]!.every((id) => seen.has(id) || known.has(id))) continue;
    if (budget.take(i)) for (const id of ids[i]!) known.add(id);
  }
}

/** Keeps an even spread of the remaining lines until the budget is used. */
export function keepSpread(lines: readonly string[], budget: LineBudget, keep: Uint8Array): void {
  const rest: number[] = [];
  for (let i = 0; i < lines.length; i++) if (!keep[i] && lines[i]!.trim() !== '') rest.push(i);
  if (rest.length === 0 || budget.full) return;
  const avg = rest.reduce((n, i) => n + approxTokens(lines[i]!) + 1, 0) / rest.length;
  const room = Math.floor((budget.limit - budget.used) / Math.max(1, avg));
  if (room <= 0) return;
  const step = rest.length / Math.min(room, rest.length);
  for (let k = 0; k * step < rest.length; k++) if (!budget.take(rest[Math.floor(k * step)]!)) break;
}
