import { arrayItemSpans, objectMemberSpans, type Span } from '../json/spans.js';

/** What a query kept of a stored original. */
export interface QueryResult {
  /** Matching items as a JSON array (each item byte-identical), or matching lines joined by newlines. */
  content: string;
  unit: 'items' | 'lines';
  matched: number;
  total: number;
  /** `all`: every term matched; `any`: no item matched all terms, so items matching any term are returned. */
  mode: 'all' | 'any';
  /** Field names the query asked for (`field=value` terms), for TOIN. */
  fields: string[];
  /** For a JSON object, the member whose array was searched. */
  path?: string;
}

interface Term {
  field?: string;
  value: string;
}

/**
 * Splits a query into terms: words, "quoted phrases", and `field=value` /
 * `field:value` pairs (the field may be a dotted path). Case-insensitive.
 */
export function parseQuery(query: string): Term[] {
  const terms: Term[] = [];
  for (const m of query.matchAll(/(?:([\w.$-]+)[=:])?(?:"([^"]*)"|(\S+))/g)) {
    const value = (m[2] ?? m[3] ?? '').toLowerCase();
    if (m[1] && value) terms.push({ field: m[1], value });
    else if (m[1] && !value) terms.push({ value: m[1].toLowerCase() });
    else if (value) terms.push({ value });
  }
  return terms;
}

function fieldValues(value: unknown, path: string[], out: string[], depth = 0): void {
  if (depth > 8 || value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const item of value) fieldValues(item, path, out, depth + 1);
    return;
  }
  const record = value as Record<string, unknown>;
  const [head, ...rest] = path;
  if (head !== undefined && head in record) {
    const v = record[head];
    if (rest.length === 0) out.push(typeof v === 'string' ? v : JSON.stringify(v));
    else fieldValues(v, rest, out, depth + 1);
  }
  // a bare field name also matches deeper down (e.g. `status` inside nested records)
  if (path.length === 1) for (const v of Object.values(record)) fieldValues(v, path, out, depth + 1);
}

function itemMatches(raw: string, term: Term, parsed: () => unknown): boolean {
  if (!term.field) return raw.toLowerCase().includes(term.value);
  const values: string[] = [];
  fieldValues(parsed(), term.field.split('.'), values);
  return values.some((v) => v.toLowerCase().includes(term.value));
}

function targetArray(text: string): { open: number; path?: string } | undefined {
  const start = text.search(/\S/);
  if (text[start] === '[') return { open: start };
  if (text[start] !== '{') return undefined;
  let best: { open: number; path: string; count: number } | undefined;
  for (const member of objectMemberSpans(text, start)) {
    if (text[member.value.start] !== '[') continue;
    const count = arrayItemSpans(text, member.value.start).length;
    if (!best || count > best.count) best = { open: member.value.start, path: member.key, count };
  }
  return best && { open: best.open, path: best.path };
}

function select<T>(
  items: T[],
  terms: Term[],
  test: (item: T, term: Term) => boolean,
): { kept: T[]; mode: 'all' | 'any' } {
  const all = items.filter((item) => terms.every((t) => test(item, t)));
  if (all.length > 0 || terms.length <= 1) return { kept: all, mode: 'all' };
  return { kept: items.filter((item) => terms.some((t) => test(item, t))), mode: 'any' };
}

/**
 * The parts of a stored original that match a query: for a JSON array (or
 * the largest array of a JSON object) the matching items, each exactly as
 * stored; otherwise the matching lines. All terms must match; when no item
 * matches all of them, items matching any term are returned (`mode: any`).
 *
 * @example matchQuery('[{"id":1,"s":"ok"},{"id":2,"s":"failed"}]', 's=failed').content // '[{"id":2,"s":"failed"}]'
 */
export function matchQuery(original: string, query: string): QueryResult {
  const terms = parseQuery(query);
  const fields = [...new Set(terms.flatMap((t) => (t.field ? [t.field] : [])))];
  let target: ReturnType<typeof targetArray>;
  try {
    JSON.parse(original);
    target = targetArray(original);
  } catch {
    target = undefined;
  }
  if (target) {
    const spans = arrayItemSpans(original, target.open);
    const test = (span: Span, term: Term) => {
      const raw = original.slice(span.start, span.end);
      let cache: unknown;
      return itemMatches(raw, term, () => {
        cache ??= JSON.parse(raw);
        return cache;
      });
    };
    const { kept, mode } = select(spans, terms, test);
    const content = `[${kept.map((s) => original.slice(s.start, s.end)).join(',')}]`;
    const result: QueryResult = {
      content,
      unit: 'items',
      matched: kept.length,
      total: spans.length,
      mode,
      fields,
    };
    if (target.path !== undefined) result.path = target.path;
    return result;
  }
  const lines = original.split('\n');
  const plain = terms.flatMap((t) =>
    t.field ? [{ value: t.field.toLowerCase() }, { value: t.value }] : [t],
  );
  const { kept, mode } = select(lines, plain, (line, term) => line.toLowerCase().includes(term.value));
  return { content: kept.join('\n'), unit: 'lines', matched: kept.length, total: lines.length, mode, fields };
}

/** Field names a retrieval query asked for (`field=value` terms), for TOIN. */
export function queryFields(query: string | undefined): string[] {
  return query ? [...new Set(parseQuery(query).flatMap((t) => (t.field ? [t.field] : [])))] : [];
}
