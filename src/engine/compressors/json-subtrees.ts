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
  if (keys === null) {
    const arr = v as readonly unknown[];
    for (let i = 0; i < arr.length; i++) {
      const d = parts[i];
      const json = d === undefined ? (JSON.stringify(arr[i]) ?? 'null') : d.rep;
      length += d === undefined ? json.length : d.length;
      out.push(json);
    }
    length += Math.max(0, out.length - 1);
    return [`[${out.join(',')}]`, length];
  }
  for (let i = 0; i < keys.length; i++) {
    const c = (v as Record<string, unknown>)[keys[i]!];
    if (leftOut(c)) continue;
    const name = JSON.stringify(keys[i]);
    const d = parts[i];
    const json = d === undefined ? (JSON.stringify(c) ?? 'null') : d.rep;
    length += name.length + 1 + (d === undefined ? json.length : d.length);
    out.push(`${name}:${json}`);
  }
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
  const children = Array.isArray(value) ? value : Object.values(value);
  for (const c of children) if (isContainer(c)) collectDigest(digestOf(c, cache), into);
}

function collectDigest(d: Digest, into: Set<string>): void {
  // a part is smaller than what holds it: nothing under a small subtree qualifies
  if (d.size < SUBTREE_MIN_CHARS) return;
  into.add(d.rep);
  // a subtree that counts is large, so its digest holds its parts'
  for (const part of d.parts!) if (part !== undefined) collectDigest(part, into);
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
  const walk: DedupeWalk = { earlier, shown: new Set(), cache: digestCache(), replaced: 0, parts: undefined };
  // the root is never replaced, so never digested
  return { value: deduped(value, undefined, walk), replaced: walk.replaced };
}

/** A `dedupeSubtrees` walk, with the digests of the parts of the object or array being mapped. */
interface DedupeWalk {
  readonly earlier: ReadonlySet<string>;
  readonly shown: Set<string>;
  readonly cache: Map<object, Digest>;
  replaced: number;
  parts: readonly (Digest | undefined)[] | undefined;
}

/** `v` (whose digest is `d`) with its repeated parts replaced. */
function deduped(v: object, d: Digest | undefined, walk: DedupeWalk): object {
  const outer = walk.parts;
  walk.parts = d?.parts;
  const out = Array.isArray(v)
    ? mapElements(v, dedupedElement, walk)
    : mapFields(v as Record<string, unknown>, dedupedField, walk);
  walk.parts = outer;
  return out;
}

function dedupedElement(c: unknown, i: number, walk: DedupeWalk): unknown {
  return dedupedPart(c, i, walk);
}

function dedupedField(c: unknown, _k: string, i: number, walk: DedupeWalk): unknown {
  return dedupedPart(c, i, walk);
}

/** Part `i` of the object or array being mapped: replaced when shown before, else walked. */
function dedupedPart(c: unknown, i: number, walk: DedupeWalk): unknown {
  if (!isContainer(c)) return c;
  const d = walk.parts?.[i] ?? digestOf(c, walk.cache);
  // a part is shorter than what holds it: nothing under a short subtree is replaced
  if (d.length < SUBTREE_MIN_CHARS) return c;
  if (walk.earlier.has(d.rep) || walk.shown.has(d.rep)) {
    walk.replaced++;
    return formatSameAs(Array.isArray(c) ? 'array' : 'object');
  }
  walk.shown.add(d.rep);
  return deduped(c, d, walk);
}
