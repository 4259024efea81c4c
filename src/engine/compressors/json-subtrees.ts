import { contentHash } from '../hash.js';
import { formatSameAs } from '../markers.js';

/** Objects and arrays shorter than this (in JSON characters) are never replaced. */
export const SUBTREE_MIN_CHARS = 200;

/** Hashes of the objects and arrays (not the root) of a JSON value that are worth deduplicating. */
export function collectSubtrees(value: unknown, into: Set<string>): void {
  const walk = (v: unknown, root: boolean): number => {
    if (typeof v !== 'object' || v === null) return (JSON.stringify(v) ?? '').length;
    let size = 2;
    for (const child of Array.isArray(v) ? v : Object.values(v)) size += walk(child, false) + 1;
    if (!root && size >= SUBTREE_MIN_CHARS) into.add(contentHash(JSON.stringify(v)));
    return size;
  };
  walk(value, true);
}

/**
 * Replaces every object or array (not the root) identical to one shown
 * earlier, in an earlier message (`earlier`) or before it in this value
 * (document order), by a short note. Returns the new value and how many were
 * replaced.
 */
export function dedupeSubtrees(
  value: unknown,
  earlier: ReadonlySet<string>,
): { value: unknown; replaced: number } {
  const shown = new Set<string>();
  let replaced = 0;
  const walk = (v: unknown, root: boolean): unknown => {
    if (typeof v !== 'object' || v === null) return v;
    if (!root) {
      const text = JSON.stringify(v);
      if (text.length >= SUBTREE_MIN_CHARS) {
        const h = contentHash(text);
        if (earlier.has(h) || shown.has(h)) {
          replaced++;
          return formatSameAs(Array.isArray(v) ? 'array' : 'object');
        }
        shown.add(h);
      }
    }
    if (Array.isArray(v)) return v.map((c) => walk(c, false));
    const out: Record<string, unknown> = {};
    for (const [k, c] of Object.entries(v)) out[k] = walk(c, false);
    return out;
  };
  return { value: walk(value, true), replaced };
}
