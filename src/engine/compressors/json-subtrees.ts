import { hash } from 'node:crypto';
import { callScopedMap, inCall } from '../call-scope.js';
import { formatSameAs } from '../markers.js';
import { jsonText } from './json-text.js';

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
   * scalars and two characters a level, one per child, keys not counted.
   */
  size: number;
  /** `#` and a hash when `length >= HASHED_FROM`, else its JSON. */
  rep: string;
}

/**
 * Digests computed during one engine call, by object: the compressor digests
 * the value it shortens, and the history scan digests the parsed output
 * again for later messages; the parts the compressor left as they were (the
 * same objects) are then looked up, not digested twice. Bounded; past the
 * bound, digests are kept for the walk that asks only.
 */
const digestsInCall = callScopedMap<object, Digest>();
const DIGESTS_IN_CALL_MAX = 200_000;

function isContainer(v: unknown): v is object {
  return typeof v === 'object' && v !== null;
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
 * The digest of an object or array of a JSON value, computed bottom-up once
 * per object (kept in `local`, or for the engine call): equal digests mean
 * equal `JSON.stringify`. The digest of a large subtree hashes its children's
 * digests, Merkle-style, so no subtree is serialized or hashed again at every
 * level above it: linear in the size of the value. Where no child is large,
 * the children's digests are their JSON, and the subtree's is its own JSON,
 * written by `JSON.stringify` in one call. A digest starting with `#` is a
 * hash; any other is the subtree's JSON, which never starts with `#`, so the
 * two cannot be confused.
 */
function digestOf(v: object, local: Map<object, Digest>): Digest {
  const known = local.get(v) ?? digestsInCall.get(v);
  if (known !== undefined) return known;
  // size - length: +1 per non-empty object or array, -(key JSON + colon) per field
  let sizeOverLength = 0;
  let largeChild = false;
  const keys = Array.isArray(v) ? null : Object.keys(v);
  if (keys === null) {
    const arr = v as readonly unknown[];
    if (arr.length > 0) sizeOverLength += 1;
    for (const c of arr)
      if (isContainer(c)) {
        const d = digestOf(c, local);
        sizeOverLength += d.size - d.length;
        if (d.length >= HASHED_FROM) largeChild = true;
      }
  } else {
    if (keys.length > 0) sizeOverLength += 1;
    for (const k of keys) {
      sizeOverLength -= keyJsonLength(k) + 1;
      const c = (v as Record<string, unknown>)[k];
      if (isContainer(c)) {
        const d = digestOf(c, local);
        sizeOverLength += d.size - d.length;
        if (d.length >= HASHED_FROM) largeChild = true;
      }
    }
  }
  let inner: string;
  let length: number;
  if (largeChild) [inner, length] = innerWithHashes(v, keys, local);
  else {
    inner = jsonText(v);
    length = inner.length;
  }
  const rep = length >= HASHED_FROM ? `#${hash('sha256', inner, 'base64')}` : inner;
  const d: Digest = { length, size: length + sizeOverLength, rep };
  if (inCall() && digestsInCall.size < DIGESTS_IN_CALL_MAX) digestsInCall.set(v, d);
  else local.set(v, d);
  return d;
}

/** The JSON of `v` with its large children written as their digests, and the length of its actual JSON. */
function innerWithHashes(
  v: object,
  keys: readonly string[] | null,
  local: Map<object, Digest>,
): [string, number] {
  const parts: string[] = [];
  let length = 2;
  const partOf = (c: unknown): string => {
    if (!isContainer(c)) {
      const json = JSON.stringify(c) ?? 'null';
      length += json.length;
      return json;
    }
    const d = digestOf(c, local);
    length += d.length;
    return d.rep;
  };
  if (keys === null) {
    for (const c of v as readonly unknown[]) parts.push(partOf(c));
    length += Math.max(0, parts.length - 1);
    return [`[${parts.join(',')}]`, length];
  }
  for (const k of keys) {
    const c = (v as Record<string, unknown>)[k];
    if (leftOut(c)) continue;
    const name = JSON.stringify(k);
    length += name.length + 1;
    parts.push(`${name}:${partOf(c)}`);
  }
  length += Math.max(0, parts.length - 1);
  return [`{${parts.join(',')}}`, length];
}

/**
 * Identities of the objects and arrays (not the root) of a JSON value that
 * are worth deduplicating: equal when their JSON is (see `digestOf`). Only
 * `dedupeSubtrees` reads them; they are never shown.
 */
export function collectSubtrees(value: unknown, into: Set<string>): void {
  if (!isContainer(value)) return;
  const local = new Map<object, Digest>();
  const visit = (c: unknown): void => {
    if (!isContainer(c)) return;
    const d = digestOf(c, local);
    // a part is smaller than what holds it: nothing under a small subtree qualifies
    if (d.size < SUBTREE_MIN_CHARS) return;
    into.add(d.rep);
    walk(c);
  };
  const walk = (v: object): void => {
    if (Array.isArray(v)) for (const c of v) visit(c);
    else for (const k of Object.keys(v)) visit((v as Record<string, unknown>)[k]);
  };
  walk(value);
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
  const local = new Map<object, Digest>();
  let replaced = 0;
  const walk = (v: object): object => {
    if (Array.isArray(v)) {
      let out: unknown[] | undefined;
      for (let i = 0; i < v.length; i++) {
        const c: unknown = v[i];
        const w = isContainer(c) ? child(c) : c;
        if (w !== c) out ??= v.slice(0, i);
        out?.push(w);
      }
      return out ?? v;
    }
    const keys = Object.keys(v);
    let out: Record<string, unknown> | undefined;
    for (let i = 0; i < keys.length; i++) {
      const c = (v as Record<string, unknown>)[keys[i]!];
      const w = isContainer(c) ? child(c) : c;
      if (w !== c && out === undefined) {
        out = {};
        for (let j = 0; j < i; j++) out[keys[j]!] = (v as Record<string, unknown>)[keys[j]!];
      }
      if (out !== undefined) out[keys[i]!] = w;
    }
    return out ?? v;
  };
  const child = (c: object): unknown => {
    const d = digestOf(c, local);
    // a part is shorter than what holds it: nothing under a short subtree is replaced
    if (d.length < SUBTREE_MIN_CHARS) return c;
    if (earlier.has(d.rep) || shown.has(d.rep)) {
      replaced++;
      return formatSameAs(Array.isArray(c) ? 'array' : 'object');
    }
    shown.add(d.rep);
    return walk(c);
  };
  return { value: walk(value), replaced };
}
