import { formatIndex, formatMarker, formatUnchanged } from '../markers.js';
import { capFor, indexBudget, JSON_MIN_ITEMS, SMALL_OUTPUT_TOKENS } from '../settings.js';
import { shortenKnownEntities } from './json-entities.js';
import { selectItems } from './json-items.js';
import { relativizeLinks } from './json-links.js';
import { MAX_JSON_DEPTH, nestsDeeperThan, parseJsonContent } from './json-parse.js';
import { renderCompact } from './json-render.js';
import { dedupeSubtrees } from './json-subtrees.js';
import { jsonText } from './json-text.js';
import { isContainer, mapElements, mapFields } from './json-walk.js';
import { approxTokens, renderKept } from './lines.js';
import { isNumberedListing, listingBody, unpadListing } from './listing.js';
import { omittedIdentifiers } from './select.js';
import type { CompressContext, Compressed } from './types.js';

interface CrushStats {
  omitted: number;
  /** JSON of every omitted item, for the index of the omitted part. */
  omittedTexts: string[];
  /** Error items in the arrays that lost items, and how many of them are kept. */
  errors: number;
  errorsKept: number;
  paths: string[];
}

/** The marker's note on error items: what the output holds of how many there were. */
export function errorNote(kept: number, total: number): string {
  if (total === 0) return '';
  return kept === total ? `${total} error items kept` : `${kept} of ${total} error items kept`;
}

/** JSON of an array item (JSON.stringify writes what it leaves out as null there). */
function itemJson(item: unknown): string {
  return isContainer(item) ? jsonText(item) : (JSON.stringify(item) ?? 'null');
}

/** A `crush` walk: the context, the counts, and the path of the object or array being mapped. */
interface CrushWalk {
  readonly ctx: CompressContext;
  readonly stats: CrushStats;
  path: string;
}

/**
 * Replaces every outermost array of at least `JSON_MIN_ITEMS` items by the
 * items `selectItems` keeps (original items only, in order). Returns `value`
 * itself where nothing in it changes (the later steps only read it).
 */
function crush(value: unknown, walk: CrushWalk, path: string): unknown {
  if (!isContainer(value)) return value;
  if (!Array.isArray(value) || value.length < JSON_MIN_ITEMS) {
    const outer = walk.path;
    walk.path = path;
    const out = Array.isArray(value)
      ? mapElements(value, crushElement, walk)
      : mapFields(value as Record<string, unknown>, crushField, walk);
    walk.path = outer;
    return out;
  }
  const { ctx, stats } = walk;
  // each item is written once: for the array's size, the selection and the index of what it omits
  const texts = value.map(itemJson);
  const tokens = approxTokens(`[${texts.join(',')}]`);
  const sel = selectItems(value, ctx, capFor('json', tokens, ctx.capScale), texts);
  const kept: unknown[] = [];
  for (let i = 0; i < value.length; i++) if (sel.keep[i]) kept.push(value[i]);
  if (kept.length === value.length) return value;
  for (let i = 0; i < value.length; i++) if (!sel.keep[i]) stats.omittedTexts.push(texts[i]!);
  stats.omitted += value.length - kept.length;
  stats.errors += sel.errors;
  stats.errorsKept += sel.errorsKept;
  stats.paths.push(`${path} kept ${kept.length} of ${value.length}`);
  return kept;
}

function crushField(c: unknown, k: string, _i: number, walk: CrushWalk): unknown {
  return crush(c, walk, `${walk.path}.${k}`);
}

function crushElement(c: unknown, i: number, walk: CrushWalk): unknown {
  return isContainer(c) ? crush(c, walk, `${walk.path}[${i}]`) : c;
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
    return isNumberedListing(lines) ? compressItemLines(lines, ctx, true) : null;
  }
  if (parsed.shape === 'lines') return compressItemLines(text.split('\n'), ctx, false);
  const links = relativizeLinks(parsed.value, ctx.earlierLinkShapes());
  const lossless = parsed.preamble + renderCompact(links.value);
  if (approxTokens(lossless) < SMALL_OUTPUT_TOKENS) return { text: lossless, lossy: false };
  const stats: CrushStats = { omitted: 0, omittedTexts: [], errors: 0, errorsKept: 0, paths: [] };
  const crushed = crush(parsed.value, { ctx, stats, path: '' }, '$');
  const known = shortenKnownEntities(crushed, ctx.earlierEntities(), formatUnchanged);
  const deduped = dedupeSubtrees(known.value, ctx.earlierJson());
  if (stats.omitted === 0 && deduped.replaced === 0 && known.omitted === 0)
    return { text: lossless, lossy: false };
  const body = renderCompact(relativizeLinks(deduped.value, ctx.earlierLinkShapes()).value);
  const note = [
    errorNote(stats.errorsKept, stats.errors),
    stats.paths.slice(0, 3).join(', '),
    stats.omitted > 0 && deduped.replaced > 0 ? `${deduped.replaced} repeated values shortened` : '',
    stats.omitted > 0 && known.omitted > 0 ? `${known.omitted} unchanged fields of known entities` : '',
  ]
    .filter(Boolean)
    .join('; ');
  const marker =
    stats.omitted > 0
      ? formatMarker({ hash: ctx.hash, omitted: stats.omitted, unit: 'items', note })
      : formatMarker({
          hash: ctx.hash,
          omitted: deduped.replaced + known.omitted,
          unit: 'fields',
          note: 'repeated or unchanged values shortened',
        });
  const index = omittedIdentifiers(
    [body, ...stats.omittedTexts],
    new Uint8Array(stats.omittedTexts.length + 1).fill(1, 0, 1),
    ctx.seen,
    indexBudget(capFor('json', approxTokens(lossless), ctx.capScale)),
  );
  const indexLine = index.length > 0 ? `\n${formatIndex(index)}` : '';
  return { text: `${parsed.preamble}${body}${indexLine}\n${marker}`, lossy: true };
}

/**
 * JSON Lines, plain or as a numbered listing (an agent reading a `.jsonl`):
 * each JSON line is an item; kept lines stay verbatim (listing numbers
 * unpadded), other lines stay, gaps get notes.
 */
function compressItemLines(
  lines: readonly string[],
  ctx: CompressContext,
  listing: boolean,
): Compressed | null {
  const body = listing ? listingBody(lines) : lines;
  const itemLines: number[] = [];
  const values: unknown[] = [];
  body.forEach((l, i) => {
    if (!/^\s*[{[]/.test(l)) return;
    let value: unknown;
    try {
      value = JSON.parse(l);
    } catch {
      return; // not an item: kept as it is
    }
    if (nestsDeeperThan(value, MAX_JSON_DEPTH)) return;
    values.push(value);
    itemLines.push(i);
  });
  if (values.length < 2) return null;
  const cap = capFor('json', approxTokens(body.join('\n')), ctx.capScale);
  const sel = selectItems(values, ctx, cap);
  const keep = new Uint8Array(lines.length).fill(1);
  itemLines.forEach((line, k) => {
    if (!sel.keep[k]) keep[line] = 0;
  });
  const shown = listing ? unpadListing(lines) : lines;
  const note = errorNote(sel.errorsKept, sel.errors) || undefined;
  const index = omittedIdentifiers(body, keep, ctx.seen, indexBudget(cap));
  const out = renderKept(shown, keep, { hash: ctx.hash, unit: 'items', index, ...(note ? { note } : {}) });
  return out === null ? null : { text: out, lossy: true };
}
