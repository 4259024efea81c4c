import { hash } from 'node:crypto';
import { callScopedMap, inCall } from '../call-scope.js';
import { formatSameAs } from '../markers.js';
import { jsonText } from './json-text.js';
import { isContainer, mapElements, mapFields } from './json-walk.js';

/** Objects and arrays shorter than this (in JSON characters) are never replaced. */
export const SUBTREE_MIN_CHARS = 200;

/**
 * Objects and arrays whose JSON is at least this long stand in their parent's
 * digest as a hash of their own (see `digestOf`). A subtree shorter than this
 * has a `size` under `SUBTREE_MIN_CHARS` too (`size` is at most 1.5 times its
 * length plus one), so every subtree the sets below hold has a hash.
 */
const HASHED_FROM = 128;

/** What `digestOf` computes for one object or array. */
interface Digest {
  /** Length of its `JSON.stringify`. */
  length: number;
  /**
   * Its size as `collectSubtrees` has always measured it: the JSON of its
   * scalars and two characters a level, one per child, keys not counted
   * (computed as `length` plus one per non-empty object or array, less each
   * field's key and colon: exact for JSON values).
   */
  size: number;
  /** `#` and a hash when `length >= HASHED_FROM`, else its JSON. */
  rep: string;
  /**
   * Of a large subtree (`length >= HASHED_FROM`), the digests of its objects
   * and arrays by position (array index, or place in `Object.keys`): the
   * walks below go down from digest to digest, not by looking objects up.
   */
  parts: readonly (Digest | undefined)[] | undefined;
}

/**
 * Digests of large subtrees computed during one engine call, by object: the
 * compressor digests the value it shortens, and the history scan digests the
 * parsed output again for later messages; the parts the compressor left as
 * they were (the same objects) are then looked up, not digested twice. Small
 * subtrees are not kept (digesting one again costs less than keeping it).
 * Bounded; past the bound, a walk keeps its digests to itself.
 */
const digestsInCall = callScopedMap<object, Digest>();
const DIGESTS_IN_CALL_MAX = 100_000;

/** Where a walk keeps the digests it computes. */
function digestCache(): Map<object, Digest> {
  return inCall() && digestsInCall.size < DIGESTS_IN_CALL_MAX ? digestsInCall : new Map();
}

/** What JSON.stringify leaves out of an object (and writes as null in an array). */
function leftOut(v: unknown): boolean {
  return v === undefined || typeof v === 'function' || typeof v === 'symbol';
}

/** Length of `JSON.stringify(key)`, without writing it when no character needs escaping. */
function keyJsonLength(key: string): number {
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff))
      return JSON.stringify(key).length;
  }
  return key.length + 2;
}

/**
 * The digest of an object or array of a JSON value, computed bottom-up:
 * equal digests mean equal `JSON.stringify`. The digest of a large subtree
 * hashes its children's digests, Merkle-style, so no subtree is serialized or
 * hashed again at every level above it: linear in the size of the value.
 * Where no child is large, the children's digests are their JSON, and the
 * subtree's is its own JSON, written by `JSON.stringify` in one call. A
 * digest starting with `#` is a hash; any other is the subtree's JSON, which
 * never starts with `#`, so the two cannot be confused.
 */
function digestOf(v: object, cache: Map<object, Digest>): Digest {
  const known = cache.get(v);
  if (known !== undefined) return known;
  // size - length: +1 per non-empty object or array, -(key JSON + colon) per field
  let sizeOverLength = 0;
  let largeChild = false;
  let parts: (Digest | undefined)[] | undefined;
  const keys = Array.isArray(v) ? null : Object.keys(v);
  const count = keys === null ? (v as readonly unknown[]).length : keys.length;
  if (count > 0) sizeOverLength += 1;
  for (let i = 0; i < count; i++) {
    let c: unknown;
    if (keys === null) c = (v as readonly unknown[])[i];
    else {
      sizeOverLength -= keyJsonLength(keys[i]!) + 1;
      c = (v as Record<string, unknown>)[keys[i]!];
    }
    if (!isContainer(c)) continue;
    const d = digestOf(c, cache);
    sizeOverLength += d.size - d.length;
    if (d.length >= HASHED_FROM) largeChild = true;
    parts ??= [];
    parts[i] = d;
  }
  let inner: string;
  let length: number;
  if (largeChild) [inner, length] = innerWithHashes(v, keys, parts!);
  else {
    inner = jsonText(v);
    length = inner.length;
  }
  if (length < HASHED_FROM) return { length, size: length + sizeOverLength, rep: inner, parts: undefined };
  const d: Digest = {
    length,
    size: length + sizeOverLength,
    rep: `#${hash('sha256', inner, 'base64')}`,
    parts: parts ?? [],
  };
  cache.set(v, d);
  return d;
}

/** The JSON of `v` with its large children written as their digests (`parts`), and the length of its actual JSON. */
function innerWithHashes(
  v: object,
  keys: readonly string[] | null,
  parts: readonly (Digest | undefined)[],
): [string, number] {
  const out: string[] = [];
  let length = 2;
  const partOf = (c: unknown, i: number): string => {
    const d = parts[i];
    if (d === undefined) {
      const json = JSON.stringify(c) ?? 'null';
      length += json.length;
      return json;
    }
    length += d.length;
    return d.rep;
  };
  if (keys === null) {
    const arr = v as readonly unknown[];
    for (let i = 0; i < arr.length; i++) out.push(partOf(arr[i], i));
    length += Math.max(0, out.length - 1);
    return [`[${out.join(',')}]`, length];
  }
  keys.forEach((k, i) => {
    const c = (v as Record<string, unknown>)[k];
    if (leftOut(c)) return;
    const name = JSON.stringify(k);
    length += name.length + 1;
    out.push(`${name}:${partOf(c, i)}`);
  });
  length += Math.max(0, out.length - 1);
  return [`{${out.join(',')}}`, length];
}

/**
 * Identities of the objects and arrays (not the root) of a JSON value that
 * are worth deduplicating: equal when their JSON is (see `digestOf`). Only
 * `dedupeSubtrees` reads them; they are never shown.
 */
export function collectSubtrees(value: unknown, into: Set<string>): void {
  if (!isContainer(value)) return;
  const cache = digestCache();
  const visit = (d: Digest): void => {
    // a part is smaller than what holds it: nothing under a small subtree qualifies
    if (d.size < SUBTREE_MIN_CHARS) return;
    into.add(d.rep);
    // a subtree that counts is large, so its digest holds its parts'
    for (const part of d.parts!) if (part !== undefined) visit(part);
  };
  const children = Array.isArray(value) ? value : Object.values(value);
  for (const c of children) if (isContainer(c)) visit(digestOf(c, cache));
}

/**
 * Replaces every object or array (not the root) identical to one shown
 * earlier, in an earlier message (`earlier`) or before it in this value
 * (document order), by a short note. Returns the new value (`value` itself
 * where nothing changes) and how many were replaced.
 */
export function dedupeSubtrees(
  value: unknown,
  earlier: ReadonlySet<string>,
): { value: unknown; replaced: number } {
  if (!isContainer(value)) return { value, replaced: 0 };
  const shown = new Set<string>();
  const cache = digestCache();
  let replaced = 0;
  // `d` is the digest of `v`, or undefined for the root (never replaced, so never digested)
  const walk = (v: object, d: Digest | undefined): object => {
    const visit = (c: unknown, i: number): unknown =>
      isContainer(c) ? child(c, d?.parts?.[i] ?? digestOf(c, cache)) : c;
    return Array.isArray(v)
      ? mapElements(v, visit)
      : mapFields(v as Record<string, unknown>, (c, _k, i) => visit(c, i));
  };
  const child = (c: object, d: Digest): unknown => {
    // a part is shorter than what holds it: nothing under a short subtree is replaced
    if (d.length < SUBTREE_MIN_CHARS) return c;
    if (earlier.has(d.rep) || shown.has(d.rep)) {
      replaced++;
      return formatSameAs(Array.isArray(c) ? 'array' : 'object');
    }
    shown.add(d.rep);
    return walk(c, d);
  };
  return { value: walk(value, undefined), replaced };
}
