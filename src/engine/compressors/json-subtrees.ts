import { createHash } from 'node:crypto';
import { formatSameAs } from '../markers.js';

/** Objects and arrays shorter than this (in JSON characters) are never replaced. */
export const SUBTREE_MIN_CHARS = 200;

/**
 * Objects and arrays whose JSON is at least this long stand in their parent's
 * digest as a hash of their own (see `digests`); below `SUBTREE_MIN_CHARS`,
 * so every subtree the sets below hold has one.
 */
const HASHED_FROM = 128;

/** What `digests` computes for one object or array. */
interface Digest {
  /** Length of its `JSON.stringify`. */
  length: number;
  /**
   * Its size as `collectSubtrees` has always measured it: the JSON of its
   * scalars and two characters a level, one per child, keys not counted.
   */
  size: number;
  /** `#` and a hash when `length >= HASHED_FROM`, else its JSON. */
  rep: string;
}

/** What JSON.stringify leaves out of an object (and writes as null in an array). */
function leftOut(v: unknown): boolean {
  return v === undefined || typeof v === 'function' || typeof v === 'symbol';
}

/** A scalar's part of a digest: its JSON (`null` for what JSON.stringify leaves out of an array). */
function scalarJson(v: unknown): string {
  return JSON.stringify(v) ?? 'null';
}

/**
 * Digests of every object and array of a JSON value, bottom-up, in one pass:
 * equal digests mean equal `JSON.stringify` (the digest of a large subtree
 * hashes its children's digests, Merkle-style, so no subtree is serialized or
 * hashed again at every level above it: linear in the size of the value).
 * A digest starting with `#` is a hash; any other is the subtree's JSON,
 * which never starts with `#`, so the two cannot be confused.
 */
function digests(value: unknown): Map<object, Digest> {
  const out = new Map<object, Digest>();
  const walk = (v: unknown): Digest | string => {
    if (typeof v !== 'object' || v === null) return scalarJson(v);
    let length = 2;
    let size = 2;
    let inner: string;
    if (Array.isArray(v)) {
      const parts: string[] = [];
      for (const child of v) {
        const d = walk(child);
        length += d.length + 1;
        // collectSubtrees counted what JSON.stringify writes as null in an array as nothing
        size += (typeof d !== 'string' ? d.size : leftOut(child) ? 0 : d.length) + 1;
        parts.push(typeof d === 'string' ? d : d.rep);
      }
      if (v.length > 0) length -= 1;
      inner = `[${parts.join(',')}]`;
    } else {
      const parts: string[] = [];
      for (const key in v) {
        if (!Object.hasOwn(v, key)) continue;
        const child = (v as Record<string, unknown>)[key];
        // JSON.stringify leaves these keys out; collectSubtrees counted them as values
        if (leftOut(child)) {
          size += 1;
          continue;
        }
        const d = walk(child);
        const name = JSON.stringify(key);
        length += name.length + 1 + d.length + 1;
        size += (typeof d === 'string' ? d.length : d.size) + 1;
        parts.push(`${name}:${typeof d === 'string' ? d : d.rep}`);
      }
      if (parts.length > 0) length -= 1;
      inner = `{${parts.join(',')}}`;
    }
    const rep = length >= HASHED_FROM ? `#${createHash('sha256').update(inner).digest('base64')}` : inner;
    const d: Digest = { length, size, rep };
    out.set(v, d);
    return d;
  };
  walk(value);
  return out;
}

/**
 * Identities of the objects and arrays (not the root) of a JSON value that
 * are worth deduplicating: equal when their JSON is (see `digests`). Only
 * `dedupeSubtrees` reads them; they are never shown.
 */
export function collectSubtrees(value: unknown, into: Set<string>): void {
  if (typeof value !== 'object' || value === null) return;
  for (const [node, d] of digests(value)) if (node !== value && d.size >= SUBTREE_MIN_CHARS) into.add(d.rep);
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
  const ids = typeof value === 'object' && value !== null ? digests(value) : new Map<object, Digest>();
  let replaced = 0;
  const walk = (v: unknown, root: boolean): unknown => {
    if (typeof v !== 'object' || v === null) return v;
    if (!root) {
      const d = ids.get(v)!;
      if (d.length >= SUBTREE_MIN_CHARS) {
        if (earlier.has(d.rep) || shown.has(d.rep)) {
          replaced++;
          return formatSameAs(Array.isArray(v) ? 'array' : 'object');
        }
        shown.add(d.rep);
      }
    }
    if (Array.isArray(v)) return v.map((c) => walk(c, false));
    const out: Record<string, unknown> = {};
    for (const [k, c] of Object.entries(v)) out[k] = walk(c, false);
    return out;
  };
  return { value: walk(value, true), replaced };
}
