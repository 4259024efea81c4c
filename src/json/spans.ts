/**
 * Byte-faithful editing of a JSON document: find where values sit in the
 * original text and replace only those, so every value that is not edited
 * keeps its exact original bytes (numbers, escapes, key order, whitespace).
 * A small scanner rather than a full tree: it only descends where an edit is.
 */

import { ENTRY_OVERHEAD, engineMemoLimit, registerEngineMemo } from '../engine/memo-budget.js';
import { TextLru } from '../engine/text-map.js';
import { type Pause, requestPaths } from '../quiet.js';

/** A path into a JSON document: object keys and array indices. */
export type JsonPath = ReadonlyArray<string | number>;

export interface Span {
  start: number;
  end: number;
}

const WS = new Set([0x20, 0x09, 0x0a, 0x0d]);

export function skipWs(text: string, i: number): number {
  while (i < text.length && WS.has(text.charCodeAt(i))) i++;
  return i;
}

function stringEnd(text: string, i: number): number {
  // text[i] is the opening quote; returns the index after the closing quote.
  let j = i + 1;
  for (;;) {
    const q = text.indexOf('"', j);
    if (q < 0) throw new SyntaxError('unterminated string');
    let k = q - 1;
    while (text.charCodeAt(k) === 0x5c) k--;
    if ((q - 1 - k) % 2 === 0) return q + 1;
    j = q + 1;
  }
}

/** Index just after the JSON value starting at (or after whitespace from) `i`. */
export function valueEnd(text: string, i: number): number {
  i = skipWs(text, i);
  const c = text.charCodeAt(i);
  if (c === 0x22) return stringEnd(text, i);
  if (c === 0x7b || c === 0x5b) {
    let depth = 0;
    for (let j = i; j < text.length; j++) {
      const d = text.charCodeAt(j);
      if (d === 0x22) j = stringEnd(text, j) - 1;
      else if (d === 0x7b || d === 0x5b) depth++;
      else if (d === 0x7d || d === 0x5d) {
        depth--;
        if (depth === 0) return j + 1;
      }
    }
    throw new SyntaxError('unterminated container');
  }
  let j = i;
  while (j < text.length) {
    const d = text.charCodeAt(j);
    if (d === 0x2c || d === 0x7d || d === 0x5d || WS.has(d)) break;
    j++;
  }
  return j;
}

/** Spans of the items of the array that starts at `open` (a `[`). Assumes valid JSON. */
export function arrayItemSpans(text: string, open: number): Span[] {
  const spans: Span[] = [];
  let k = skipWs(text, open + 1);
  if (text[k] === ']') return spans;
  while (k < text.length) {
    const end = valueEnd(text, k);
    spans.push({ start: k, end });
    k = skipWs(text, end);
    if (text[k] !== ',') break;
    k = skipWs(text, k + 1);
  }
  return spans;
}

/** Spans of the top-level members of the object at `open` (a `{`): key and value. Assumes valid JSON. */
export function objectMemberSpans(text: string, open: number): Array<{ key: string; value: Span }> {
  const out: Array<{ key: string; value: Span }> = [];
  let k = skipWs(text, open + 1);
  while (k < text.length && text[k] === '"') {
    const keyEnd = stringEnd(text, k);
    const key = JSON.parse(text.slice(k, keyEnd)) as string;
    k = skipWs(text, skipWs(text, keyEnd) + 1); // past ':'
    const end = valueEnd(text, k);
    out.push({ key, value: { start: k, end } });
    k = skipWs(text, end);
    if (text[k] !== ',') break;
    k = skipWs(text, k + 1);
  }
  return out;
}

/** A parsed value guiding the scan, or NO_VALUE when not known (then the text is scanned). */
type Known = unknown;

/** Spans of one container's members or elements; `close` is the index after its closing bracket. */
export type ContainerSpans =
  | { map: Map<string, Span & { value: Known }>; close: number; duplicate?: boolean }
  | { list: Array<Span & { value: Known }>; close: number };

const NO_VALUE = Symbol('unknown');

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function readKey(text: string, i: number, keyEnd: number): string {
  const raw = text.slice(i + 1, keyEnd - 1);
  // kept in span maps that outlive the request: must not hold on to the whole body
  return raw.includes('\\') ? (JSON.parse(text.slice(i, keyEnd)) as string) : detached(raw);
}

/**
 * `s` as a string of its own. In V8 a slice (or a concatenation of slices)
 * of a long string keeps that whole string alive; a memo that outlives the
 * request must not hold on to the request's body that way.
 */
export function detached(s: string): string {
  return s.length < 13 ? s : ` ${s}`.slice(1);
}

/** Strings shorter than this are measured directly. */
const SPELLED_MEMO_FROM = 256;

/**
 * Spelled lengths of long strings seen recently, by the string: the splicer
 * skips every earlier message of a conversation on each turn, and a lookup
 * (by length, then a comparison with the same string object: `TextLru`, no
 * V8 string hash) is far cheaper than measuring the text again (principle
 * 4). Exact; bounded by the bytes of the strings it holds, as V8 keeps them
 * (the server's share of `--memo-max-bytes`, see memo-budget.ts).
 */
let spelledMemo = createSpelledMemo(engineMemoLimit('spelled_lengths'));

function createSpelledMemo(maxBytes: number): TextLru<number> {
  return new TextLru<number>(maxBytes);
}

registerEngineMemo('spelled_lengths', {
  bytes: () => spelledMemo.calculatedSize,
  limit(maxBytes) {
    if (maxBytes !== spelledMemo.maxSize) spelledMemo = createSpelledMemo(maxBytes);
  },
});

/** V8's string header and the number kept with it, besides the entry. */
const SPELLED_ENTRY_BYTES = 16 + 8 + ENTRY_OVERHEAD;

/**
 * Length of `value` in JSON's shortest spelling (what JSON.stringify writes):
 * any valid spelling of the same string is at least this long. Undefined for
 * a long string not measured yet: it is measured after the request's path
 * (`measureLater`), and the caller finds its end in the text instead.
 */
function spelledLength(value: string): number | undefined {
  if (value.length < SPELLED_MEMO_FROM) return measureSpelled(value);
  const n = spelledMemo.get(value);
  if (n === undefined) measureLater(value);
  return n;
}

/** Long strings whose end was found in the text, to be measured and memoized. */
let unmeasured: string[] = [];
let measureScheduled = false;

/**
 * Measures `value` once no request is on its path (`requestPaths.later`:
 * neither this request's path nor the next one's): finding a string's end
 * in the text (`stringEnd`, a search for quotes) costs a quarter of measuring
 * it character by character, and only later turns need the memo (issue 19:
 * ~0.7 ms less before forwarding a new ~91k-token conversation). Not in a
 * process that serves no later turn (`svc compress`): measuring them there
 * took 8-12 ms of the command's CPU while it closed its files.
 */
function measureLater(value: string): void {
  // a one-shot command has no later turn to measure it for
  if (!requestPaths.laterTurns) return;
  unmeasured.push(value);
  if (measureScheduled) return;
  measureScheduled = true;
  requestPaths.later(measureUnmeasured, () => undefined);
}

async function measureUnmeasured(pause: Pause): Promise<void> {
  const values = unmeasured;
  unmeasured = [];
  measureScheduled = false;
  for (const value of values) {
    if (spelledMemo.has(value)) continue;
    const n = measureSpelled(value);
    // a string with any character past Latin-1 is kept two bytes a character
    const width = wide ? 2 : 1;
    spelledMemo.set(value, n, width * value.length + SPELLED_ENTRY_BYTES);
    const p = pause();
    if (p) await p;
  }
}

/** Whether the last `measureSpelled` saw a character past Latin-1. */
let wide = false;

function measureSpelled(value: string): number {
  let n = value.length + 2;
  let past = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    past |= c;
    if (c === 0x22 || c === 0x5c) n += 1;
    else if (c < 0x20) n += c === 8 || c === 9 || c === 10 || c === 12 || c === 13 ? 1 : 5;
    else if (c >= 0xd800 && c <= 0xdfff) {
      const next = value.charCodeAt(i + 1);
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) i++;
      else n += 5; // a lone surrogate is written as \uXXXX
    }
  }
  wide = past > 0xff;
  return n;
}

/**
 * True when `end - 1` holds a closing quote: an unescaped `"`. Used with the
 * shortest length: the real end is never before it, and any quote inside a
 * string is escaped, so an unescaped quote there is the real end.
 */
function isStringEnd(text: string, end: number): boolean {
  if (text.charCodeAt(end - 1) !== 0x22) return false;
  let k = end - 2;
  while (text.charCodeAt(k) === 0x5c) k--;
  return (end - 2 - k) % 2 === 0;
}

/**
 * Finds value spans, guided by the already parsed value when it is known:
 * a string is then skipped by its shortest spelled length, checked by one
 * look at the text, instead of scanning it for quotes, which is what makes
 * splicing a body with a huge tool output cheap on every later turn (a long
 * string met the first time is scanned, and measured after). Where text and
 * value disagree (non-standard escapes, duplicate keys) it falls back to scanning.
 */
class Scanner {
  /** Member / element spans of each parsed container, found once (a JSON.parse result holds each object once). */
  private readonly found: WeakMap<object, ContainerSpans>;

  constructor(
    readonly text: string,
    hints?: SpanHints,
  ) {
    this.found = hints?.text === text ? hints.found : new WeakMap();
  }

  /** Index just after the value starting at `i`. */
  end(i: number, value: Known = NO_VALUE): number {
    const { text } = this;
    const c = text.charCodeAt(i);
    if (c === 0x22 && typeof value === 'string') {
      const spelled = spelledLength(value);
      if (spelled === undefined) return stringEnd(text, i);
      const end = i + spelled;
      return isStringEnd(text, end) ? end : stringEnd(text, i);
    }
    if (c === 0x5b && Array.isArray(value)) {
      const els = this.elements({ start: i, end: -1 }, value);
      return els.close;
    }
    if (c === 0x7b && isPlainObject(value)) return this.members({ start: i, end: -1 }, value).close;
    return valueEnd(text, i);
  }

  /** Members of the object at `span`: key -> value span (and value); `close` is the index after `}`. */
  members(
    span: Span,
    value: Known = NO_VALUE,
  ): { map: Map<string, Span & { value: Known }>; close: number; duplicate?: boolean } {
    const obj = isPlainObject(value) ? value : undefined;
    const known = obj && this.found.get(obj);
    if (known && 'map' in known) return known;
    const result = this.scanMembers(span, obj);
    if (obj) this.found.set(obj, result);
    return result;
  }

  private scanMembers(
    span: Span,
    obj: Record<string, unknown> | undefined,
  ): { map: Map<string, Span & { value: Known }>; close: number; duplicate?: boolean } {
    const { text } = this;
    const map = new Map<string, Span & { value: Known }>();
    let duplicate = false;
    let i = skipWs(text, span.start + 1);
    if (text.charCodeAt(i) === 0x7d) return { map, close: i + 1 };
    for (;;) {
      const keyEnd = stringEnd(text, i);
      const key = readKey(text, i, keyEnd);
      i = skipWs(text, keyEnd) + 1; // past ':'
      const start = skipWs(text, i);
      const member = obj && Object.hasOwn(obj, key) ? obj[key] : NO_VALUE;
      const end = this.end(start, member);
      duplicate ||= map.has(key);
      map.set(key, { start, end, value: member });
      i = skipWs(text, end);
      if (text.charCodeAt(i) === 0x7d) return { map, close: i + 1, duplicate };
      i = skipWs(text, i + 1); // past ','
    }
  }

  /** Elements of the array at `span`; `close` is the index after `]`. */
  elements(span: Span, value: Known = NO_VALUE): { list: Array<Span & { value: Known }>; close: number } {
    const arr = Array.isArray(value) ? value : undefined;
    const known = arr && this.found.get(arr);
    if (known && 'list' in known) return known;
    const result = this.scanElements(span, arr);
    if (arr) this.found.set(arr, result);
    return result;
  }

  private scanElements(
    span: Span,
    arr: unknown[] | undefined,
  ): { list: Array<Span & { value: Known }>; close: number } {
    const { text } = this;
    const list: Array<Span & { value: Known }> = [];
    let i = skipWs(text, span.start + 1);
    if (text.charCodeAt(i) === 0x5d) return { list, close: i + 1 };
    for (let k = 0; ; k++) {
      const start = i;
      const element = arr && k < arr.length ? arr[k] : NO_VALUE;
      const end = this.end(start, element);
      list.push({ start, end, value: element });
      i = skipWs(text, end);
      if (text.charCodeAt(i) === 0x5d) return { list, close: i + 1 };
      i = skipWs(text, i + 1);
    }
  }
}

/** Edits below one value. Built by `JsonEdits`, applied by `applyJsonEdits`. */
interface EditNode {
  /** New JSON text for this whole value. */
  set?: string;
  children: Map<string | number, EditNode>;
  /** Array elements to leave out. */
  remove: Set<number>;
  /** JSON texts to insert before element `i` (`i` = length: append). */
  insert: Map<number, string[]>;
  /** New object members (key -> JSON text), appended after the existing ones. */
  add: Map<string, string>;
  /** Told the new JSON text of this value once it is written. */
  capture?: WrittenSink;
}

/** What `JsonEdits.capture` tells the new text of a value (an object, not a closure made per call: see engine/compressors/json-walk.ts). */
export interface WrittenSink {
  written(json: string): void;
}

function node(): EditNode {
  return { children: new Map(), remove: new Set(), insert: new Map(), add: new Map() };
}

/** A set of edits addressed by path, applied to the original text in one pass. */
export class JsonEdits {
  readonly root: EditNode = node();
  private count = 0;

  private at(path: JsonPath): EditNode {
    let n = this.root;
    for (const key of path) {
      let next = n.children.get(key);
      if (!next) {
        next = node();
        n.children.set(key, next);
      }
      n = next;
    }
    return n;
  }

  /** Replaces the value at `path` with `value` (serialized with JSON.stringify). */
  set(path: JsonPath, value: unknown): void {
    this.setJson(path, JSON.stringify(value));
  }

  /** Replaces the value at `path` with the JSON text `json` (written as is). */
  setJson(path: JsonPath, json: string): void {
    this.at(path).set = json;
    this.count++;
  }

  /** Tells `sink` the new text of the value at `path` when the edits are applied (to memoize it). */
  capture(path: JsonPath, sink: WrittenSink): void {
    this.at(path).capture = sink;
  }

  /** Leaves out the array element at `path` (last key an index). */
  remove(path: JsonPath): void {
    const index = path.at(-1);
    if (typeof index !== 'number') throw new TypeError('remove needs an array index');
    this.at(path.slice(0, -1)).remove.add(index);
    this.count++;
  }

  /** Inserts `value` into the array at `arrayPath` before element `index`. */
  insert(arrayPath: JsonPath, index: number, value: unknown): void {
    const n = this.at(arrayPath);
    const list = n.insert.get(index) ?? [];
    list.push(JSON.stringify(value));
    n.insert.set(index, list);
    this.count++;
  }

  /** Adds member `key` to the object at `objectPath` (e.g. a `tools` array the request lacks). */
  addMember(objectPath: JsonPath, key: string, value: unknown): void {
    this.at(objectPath).add.set(key, JSON.stringify(value));
    this.count++;
  }

  /** Number of edits recorded. */
  get size(): number {
    return this.count;
  }
}

function rewrite(scan: Scanner, span: Span, n: EditNode, value: Known): string {
  const out = rewriteValue(scan, span, n, value);
  n.capture?.written(out);
  return out;
}

function rewriteValue(scan: Scanner, span: Span, n: EditNode, value: Known): string {
  const { text } = scan;
  if (n.set !== undefined) return n.set;
  const c = text.charCodeAt(span.start);
  if (c === 0x7b) {
    if (n.children.size === 0 && n.add.size === 0) return text.slice(span.start, span.end);
    const members = scan.members(span, value).map;
    const pieces: Array<[Span, string]> = [];
    for (const [key, child] of n.children) {
      const member = members.get(String(key));
      if (!member) throw new RangeError(`no member "${key}" to edit`);
      pieces.push([member, rewrite(scan, member, child, member.value)]);
    }
    let out = splice(text, span, pieces);
    if (n.add.size > 0) {
      const added = [...n.add].map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',');
      out = `${out.slice(0, -1).trimEnd()}${members.size > 0 ? ',' : ''}${added}}`;
    }
    return out;
  }
  if (c === 0x5b) {
    const elements = scan.elements(span, value).list;
    const restructured = n.remove.size > 0 || n.insert.size > 0;
    if (!restructured) {
      if (n.children.size === 0) return text.slice(span.start, span.end);
      const pieces: Array<[Span, string]> = [];
      for (const [key, child] of n.children) {
        const el = elements[key as number];
        if (!el) throw new RangeError(`no element ${key} to edit`);
        pieces.push([el, rewrite(scan, el, child, el.value)]);
      }
      return splice(text, span, pieces);
    }
    const items: string[] = [];
    elements.forEach((el, i) => {
      items.push(...(n.insert.get(i) ?? []));
      if (n.remove.has(i)) return;
      const child = n.children.get(i);
      items.push(child ? rewrite(scan, el, child, el.value) : text.slice(el.start, el.end));
    });
    items.push(...(n.insert.get(elements.length) ?? []));
    return `[${items.join(',')}]`;
  }
  throw new RangeError('cannot edit inside a scalar');
}

function byStart(a: [Span, string], b: [Span, string]): number {
  return a[0].start - b[0].start;
}

function splice(text: string, span: Span, pieces: Array<[Span, string]>): string {
  pieces.sort(byStart);
  let out = '';
  let at = span.start;
  for (const [s, replacement] of pieces) {
    out += text.slice(at, s.start) + replacement;
    at = s.end;
  }
  return out + text.slice(at, span.end);
}

/**
 * Spans of the containers of one parsed document, known before any edit
 * (found while parsing it, see `prefix-parse.ts`), so `applyJsonEdits` need
 * not scan for them again. Valid for `text` only: with another text they are ignored.
 */
export interface SpanHints {
  readonly text: string;
  readonly found: WeakMap<object, ContainerSpans>;
}

/**
 * Spans of the top-level members of the object `value` (the `JSON.parse`
 * result of `text`), by key; undefined when `text` does not hold an object
 * or holds a key twice. Cheap with `hints` from parsing: only members they do not cover are scanned.
 */
export function memberSpans(
  text: string,
  value: Record<string, unknown>,
  hints?: SpanHints,
): Map<string, Span> | undefined {
  const start = skipWs(text, 0);
  if (text.charCodeAt(start) !== 0x7b) return undefined;
  const { map, duplicate } = new Scanner(text, hints).members({ start, end: -1 }, value);
  return duplicate ? undefined : map;
}

/**
 * Spans of the elements of the array member `key` of the object `value`
 * (the `JSON.parse` result of `text`), found by a scan guided by `value`;
 * recorded in `hints`. Undefined when `text` does not hold such an object
 * or holds the key twice.
 */
export function arrayMemberSpans(
  text: string,
  value: Record<string, unknown>,
  key: string,
  hints: SpanHints,
): { members: Map<string, Span>; items: Span[] } | undefined {
  const scan = new Scanner(text, hints);
  const start = skipWs(text, 0);
  if (text.charCodeAt(start) !== 0x7b) return undefined;
  const { map, duplicate } = scan.members({ start, end: -1 }, value);
  const member = map.get(key);
  if (!member || duplicate || !Array.isArray(member.value)) return undefined;
  return { members: map, items: scan.elements(member, member.value).list };
}

/**
 * Applies `edits` to the JSON document `text`; everything not edited keeps
 * its original characters. `parsed` (the document's `JSON.parse` result), when
 * given, makes finding values fast. Throws when a path does not exist.
 *
 * @example
 * const edits = new JsonEdits();
 * edits.set(['messages', 3, 'content'], 'shorter');
 * applyJsonEdits(original, edits, JSON.parse(original));
 */
export function applyJsonEdits(text: string, edits: JsonEdits, parsed?: unknown, hints?: SpanHints): string {
  if (edits.size === 0) return text;
  const start = skipWs(text, 0);
  // A JSON text is one value: it ends at the last non-whitespace character.
  const end = text.trimEnd().length;
  const scan = new Scanner(text, hints);
  return (
    text.slice(0, start) +
    rewrite(scan, { start, end }, edits.root, parsed === undefined ? NO_VALUE : parsed) +
    text.slice(end)
  );
}
