import { formatMarker } from '../markers.js';
import { JSON_MIN_ITEMS, SMALL_OUTPUT_TOKENS } from '../settings.js';
import { selectItems } from './json-items.js';
import { parseJsonContent } from './json-parse.js';
import { renderCompact } from './json-render.js';
import { dedupeSubtrees } from './json-subtrees.js';
import { approxTokens, renderKept } from './lines.js';
import { isNumberedListing, listingBody, unpadListing } from './listing.js';
import type { CompressContext, Compressed } from './types.js';

/** Share of an array's tokens its selection may use beyond the mandatory items; clamped. */
function arrayBudget(tokens: number): number {
  return Math.min(2500, Math.max(250, Math.round(tokens * 0.15)));
}

interface CrushStats {
  omitted: number;
  errors: number;
  paths: string[];
}

/**
 * Replaces every outermost array of at least `JSON_MIN_ITEMS` items by the
 * items `selectItems` keeps (original items only, in order).
 */
function crush(value: unknown, ctx: CompressContext, stats: CrushStats, path: string): unknown {
  if (Array.isArray(value)) {
    if (value.length < JSON_MIN_ITEMS) return value.map((v, i) => crush(v, ctx, stats, `${path}[${i}]`));
    const tokens = approxTokens(JSON.stringify(value));
    const sel = selectItems(value, ctx, arrayBudget(tokens));
    const kept = value.filter((_, i) => sel.keep[i]);
    if (kept.length < value.length) {
      stats.omitted += value.length - kept.length;
      stats.errors += sel.errors;
      stats.paths.push(`${path} kept ${kept.length} of ${value.length}`);
    }
    return kept;
  }
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = crush(v, ctx, stats, `${path}.${k}`);
    return out;
  }
  return value;
}

/**
 * JSON: lossless first (minify, columnar form for uniform records); past the
 * small threshold, arrays keep the items `selectItems` chooses. The output is
 * the preamble, valid JSON holding only original items, then the marker.
 */
export function compressJson(text: string, ctx: CompressContext): Compressed | null {
  const parsed = parseJsonContent(text);
  if (!parsed) {
    const lines = text.split('\n');
    return isNumberedListing(lines) ? compressJsonListing(lines, ctx) : null;
  }
  if (parsed.shape === 'lines') return compressJsonLines(text, parsed.value as unknown[], ctx);
  const lossless = parsed.pretty ? parsed.preamble + renderCompact(parsed.value) : text;
  if (ctx.countTokens(lossless) < SMALL_OUTPUT_TOKENS) return { text: lossless, lossy: false };
  const stats: CrushStats = { omitted: 0, errors: 0, paths: [] };
  const crushed = crush(parsed.value, ctx, stats, '$');
  const deduped = dedupeSubtrees(crushed, ctx.earlierJson());
  if (stats.omitted === 0 && deduped.replaced === 0) return { text: lossless, lossy: false };
  const body = parsed.pretty ? renderCompact(deduped.value) : JSON.stringify(deduped.value);
  const note = [
    stats.errors > 0 ? `${stats.errors} error items kept` : '',
    stats.paths.slice(0, 3).join(', '),
    stats.omitted > 0 && deduped.replaced > 0 ? `${deduped.replaced} repeated values shortened` : '',
  ]
    .filter(Boolean)
    .join('; ');
  const marker =
    stats.omitted > 0
      ? formatMarker({ hash: ctx.hash, omitted: stats.omitted, unit: 'items', note })
      : formatMarker({
          hash: ctx.hash,
          omitted: deduped.replaced,
          unit: 'fields',
          note: 'repeated values shortened',
        });
  return { text: `${parsed.preamble}${body}\n${marker}`, lossy: true };
}

/** JSON Lines: each line is an item; kept lines stay verbatim, gaps get notes. */
function compressJsonLines(text: string, values: unknown[], ctx: CompressContext): Compressed | null {
  const lines = text.split('\n');
  const itemLine: number[] = [];
  lines.forEach((l, i) => {
    if (l.trim() !== '') itemLine.push(i);
  });
  const sel = selectItems(values, ctx, arrayBudget(approxTokens(text)));
  const keep = new Uint8Array(lines.length).fill(1);
  itemLine.forEach((line, k) => {
    if (!sel.keep[k]) keep[line] = 0;
  });
  const note = sel.errors > 0 ? `${sel.errors} error items kept` : undefined;
  const out = renderKept(lines, keep, { hash: ctx.hash, unit: 'items', ...(note ? { note } : {}) });
  return out === null ? null : { text: out, lossy: true };
}

/** A numbered listing of a JSON Lines file (an agent reading a `.jsonl`): items are the JSON lines. */
function compressJsonListing(lines: string[], ctx: CompressContext): Compressed | null {
  const body = listingBody(lines);
  const itemLines: number[] = [];
  const values: unknown[] = [];
  body.forEach((l, i) => {
    if (!/^\s*[{[]/.test(l)) return;
    try {
      values.push(JSON.parse(l));
      itemLines.push(i);
    } catch {
      // not an item: kept as it is
    }
  });
  if (values.length < 2) return null;
  const sel = selectItems(values, ctx, arrayBudget(approxTokens(body.join('\n'))));
  const keep = new Uint8Array(lines.length).fill(1);
  itemLines.forEach((line, k) => {
    if (!sel.keep[k]) keep[line] = 0;
  });
  const note = sel.errors > 0 ? `${sel.errors} error items kept` : undefined;
  const out = renderKept(unpadListing(lines), keep, {
    hash: ctx.hash,
    unit: 'items',
    ...(note ? { note } : {}),
  });
  return out === null ? null : { text: out, lossy: true };
}
