import { hash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { contentHash } from '../engine/hash.js';

/** How an answer is delivered; each mode is cached under its own key. */
export type CacheMode = 'json' | 'sse';

/** Request headers that change what the provider answers (API version, beta features, content encoding). */
const KEYED_HEADERS = ['anthropic-version', 'anthropic-beta', 'openai-beta', 'accept-encoding'] as const;

export interface CacheKeyInput {
  /** Request path as the client sent it, e.g. `/v1/messages`. */
  path: string;
  /** The parsed request body, before compression. */
  body: Record<string, unknown>;
  /** Hash of the client's key (`requestKeyHash`): one client never sees another's answers. */
  keyHash: string;
  /** The request headers; only those in KEYED_HEADERS are used. */
  headers?: IncomingHttpHeaders;
}

/** `sse` when the client asked for a stream (`"stream": true`), else `json`. */
export function cacheMode(body: Record<string, unknown>): CacheMode {
  return body.stream === true ? 'sse' : 'json';
}

/**
 * The response-cache key of a request: SHA-256 over the path, the stream
 * mode, the answer-deciding headers, the key partition and the canonical
 * JSON of the body (keys sorted, no insignificant whitespace; see
 * `canonicalJson`), so requests
 * that differ only in key order or formatting share an entry while any
 * change of model, system, messages, tools, tool choice or a sampling or
 * output parameter makes a new one.
 *
 * @example responseCacheKey({ path: '/v1/messages', body, keyHash: 'a1b2...' })
 */
export function responseCacheKey(input: CacheKeyInput): string {
  const fields: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(input.body)) {
    // `metadata` and `user` count too: they name a session or an end user, whose answers
    // (tool calls included) another session must not get (issue 15).
    if (name === 'stream') continue;
    fields[name] = value;
  }
  const headers: Record<string, string> = {};
  for (const name of KEYED_HEADERS) {
    const value = input.headers?.[name];
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  const material = canonicalJson({
    v: 2,
    path: input.path,
    mode: cacheMode(input.body),
    key: input.keyHash,
    headers,
    body: fields,
  });
  return hash('sha256', material, 'hex');
}

/** Strings at least this long enter the key material as their content hash. */
const HASHED_FROM = 256;

/**
 * Canonical JSON of a parsed JSON value (object keys sorted by code unit,
 * no whitespace, `undefined` members left out as JSON.stringify does), except
 * that a string of `HASHED_FROM` characters or more is written as `#` and its
 * content hash, unquoted, an object or array whose canonical form has that
 * many characters as `%` and the hash of that form, an array of
 * `CHAINED_FROM` elements or more as `&`, its length and a hash chain, and a
 * value nested deeper than `RECURSE_TO` as `!` and a hash. No JSON
 * text contains a bare `#`, `%`, `&` or `!`, so two values get the same material
 * only when they are equal (up to a hash collision, as for the key itself).
 * Content hashes are memoized by the text and canonical forms by the object,
 * so a conversation re-sent each turn is not serialized again in full for
 * its key (principle 4).
 */
export function canonicalJson(value: unknown, depth = 0): string {
  if (typeof value === 'string')
    return value.length >= HASHED_FROM ? `#${contentHash(value)}` : JSON.stringify(value);
  if (typeof value !== 'object' || value === null) return primitiveJson(value);
  let out = canonical.get(value);
  if (out === undefined) {
    out = depth >= RECURSE_TO ? `!${contentHash(plainCanonicalJson(value))}` : canonicalOf(value, depth);
    if (out.length >= HASHED_FROM) out = `%${contentHash(out)}`;
    canonical.set(value, out);
  }
  return out;
}

/**
 * Canonical forms by parsed object (a long one as `%` and its hash, so the
 * key material stays small). The proxy hands on the same message
 * objects for the part of a conversation it has seen (`formats/prefix-parse.ts`),
 * so a key costs a lookup per message, not a walk of its content. Parsed
 * request bodies are never modified.
 */
const canonical = new WeakMap<object, string>();

/** Arrays of at least this many elements enter the material as a hash chain over their elements. */
const CHAINED_FROM = 16;

/** Chain hash after each element object, by element and the chain hash before it. */
const chainAfter = new WeakMap<object, { before: string; hash: string }>();

/**
 * A long array (a conversation's messages) as `&`, its length and a hash
 * chain over the canonical forms of its elements. The chain after an element
 * is memoized by the element and the chain before it, so an array that
 * repeats an earlier one's elements and adds some costs a lookup per old
 * element and a hash per new one (principle 4).
 */
function chainedArray(value: unknown[], depth: number): string {
  let chain = '';
  for (const v of value) {
    const memoable = typeof v === 'object' && v !== null;
    const known = memoable ? chainAfter.get(v) : undefined;
    if (known?.before === chain) {
      chain = known.hash;
      continue;
    }
    const next = hash('sha256', `${chain}|${v === undefined ? 'null' : canonicalJson(v, depth + 1)}`, 'hex');
    if (memoable) chainAfter.set(v, { before: chain, hash: next });
    chain = next;
  }
  return `&${value.length}:${chain}`;
}

function canonicalOf(value: object, depth: number): string {
  if (Array.isArray(value) && value.length >= CHAINED_FROM) return chainedArray(value, depth);
  if (Array.isArray(value)) {
    let out = '[';
    for (let k = 0; k < value.length; k++) {
      const v = value[k];
      out += `${k === 0 ? '' : ','}${v === undefined ? 'null' : canonicalJson(v, depth + 1)}`;
    }
    return `${out}]`;
  }
  const obj = value as Record<string, unknown>;
  let out = '';
  for (const key of Object.keys(obj).sort()) {
    const v = obj[key];
    if (v === undefined || typeof v === 'function') continue;
    out += `${out === '' ? '' : ','}${JSON.stringify(key)}:${canonicalJson(v, depth + 1)}`;
  }
  return `{${out}}`;
}

/**
 * Nesting depth up to which `canonicalJson` recurses; a deeper value is
 * written as `!` and the hash of its plain canonical JSON, built without
 * recursion: a 10k-deep body overflowed the stack here (issue 15).
 */
const RECURSE_TO = 64;

function primitiveJson(value: unknown): string {
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'null';
  return JSON.stringify(value) ?? 'null';
}

/** Literal output text on the work stack of `plainCanonicalJson`. */
class Literal {
  constructor(readonly text: string) {}
}

/**
 * Canonical JSON (keys sorted, no whitespace, no hashed parts) of a value of
 * any depth, with an explicit stack instead of recursion.
 */
function plainCanonicalJson(root: unknown): string {
  let out = '';
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const item = stack.pop();
    if (item instanceof Literal) out += item.text;
    else if (typeof item !== 'object' || item === null) out += primitiveJson(item);
    else if (Array.isArray(item)) {
      stack.push(new Literal(']'));
      for (let k = item.length - 1; k >= 0; k--) {
        stack.push(item[k] === undefined ? null : item[k]);
        if (k > 0) stack.push(new Literal(','));
      }
      stack.push(new Literal('['));
    } else {
      const obj = item as Record<string, unknown>;
      const keys = Object.keys(obj)
        .sort()
        .filter((key) => obj[key] !== undefined && typeof obj[key] !== 'function');
      stack.push(new Literal('}'));
      for (let k = keys.length - 1; k >= 0; k--) {
        stack.push(obj[keys[k]!]);
        stack.push(new Literal(`${k > 0 ? ',' : ''}${JSON.stringify(keys[k])}:`));
      }
      stack.push(new Literal('{'));
    }
  }
  return out;
}
