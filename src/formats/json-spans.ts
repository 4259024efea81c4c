/**
 * Byte-faithful editing of a JSON document: find where values sit in the
 * original text and replace only those, so every value that is not edited
 * keeps its exact original bytes (numbers, escapes, key order, whitespace).
 * A small scanner rather than a full tree: it only descends where an edit is.
 */

/** A path into a JSON document: object keys and array indices. */
export type JsonPath = ReadonlyArray<string | number>;

interface Span {
  start: number;
  end: number;
}

const WS = new Set([0x20, 0x09, 0x0a, 0x0d]);

function skipWs(text: string, i: number): number {
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

/** Members of the object at `span`: key -> value span. */
function objectMembers(text: string, span: Span): Map<string, Span> {
  const out = new Map<string, Span>();
  let i = skipWs(text, span.start + 1);
  if (text.charCodeAt(i) === 0x7d) return out;
  for (;;) {
    const keyEnd = stringEnd(text, i);
    const key = JSON.parse(text.slice(i, keyEnd)) as string;
    i = skipWs(text, keyEnd) + 1; // past ':'
    const start = skipWs(text, i);
    const end = valueEnd(text, start);
    out.set(key, { start, end });
    i = skipWs(text, end);
    if (text.charCodeAt(i) === 0x7d) return out;
    i = skipWs(text, i + 1); // past ','
  }
}

/** Elements of the array at `span`. */
function arrayElements(text: string, span: Span): Span[] {
  const out: Span[] = [];
  let i = skipWs(text, span.start + 1);
  if (text.charCodeAt(i) === 0x5d) return out;
  for (;;) {
    const start = i;
    const end = valueEnd(text, start);
    out.push({ start, end });
    i = skipWs(text, end);
    if (text.charCodeAt(i) === 0x5d) return out;
    i = skipWs(text, i + 1);
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
    this.at(path).set = JSON.stringify(value);
    this.count++;
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

function rewrite(text: string, span: Span, n: EditNode): string {
  if (n.set !== undefined) return n.set;
  const c = text.charCodeAt(span.start);
  if (c === 0x7b) {
    if (n.children.size === 0 && n.add.size === 0) return text.slice(span.start, span.end);
    const members = objectMembers(text, span);
    const pieces: Array<[Span, string]> = [];
    for (const [key, child] of n.children) {
      const member = members.get(String(key));
      if (!member) throw new RangeError(`no member "${key}" to edit`);
      pieces.push([member, rewrite(text, member, child)]);
    }
    let out = splice(text, span, pieces);
    if (n.add.size > 0) {
      const added = [...n.add].map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',');
      out = `${out.slice(0, -1).trimEnd()}${members.size > 0 ? ',' : ''}${added}}`;
    }
    return out;
  }
  if (c === 0x5b) {
    const elements = arrayElements(text, span);
    const restructured = n.remove.size > 0 || n.insert.size > 0;
    if (!restructured) {
      if (n.children.size === 0) return text.slice(span.start, span.end);
      const pieces: Array<[Span, string]> = [];
      for (const [key, child] of n.children) {
        const el = elements[key as number];
        if (!el) throw new RangeError(`no element ${key} to edit`);
        pieces.push([el, rewrite(text, el, child)]);
      }
      return splice(text, span, pieces);
    }
    const items: string[] = [];
    elements.forEach((el, i) => {
      items.push(...(n.insert.get(i) ?? []));
      if (n.remove.has(i)) return;
      const child = n.children.get(i);
      items.push(child ? rewrite(text, el, child) : text.slice(el.start, el.end));
    });
    items.push(...(n.insert.get(elements.length) ?? []));
    return `[${items.join(',')}]`;
  }
  throw new RangeError('cannot edit inside a scalar');
}

function splice(text: string, span: Span, pieces: Array<[Span, string]>): string {
  pieces.sort((a, b) => a[0].start - b[0].start);
  let out = '';
  let at = span.start;
  for (const [s, replacement] of pieces) {
    out += text.slice(at, s.start) + replacement;
    at = s.end;
  }
  return out + text.slice(at, span.end);
}

/**
 * Applies `edits` to the JSON document `text`; everything not edited keeps
 * its original characters. Throws when a path does not exist.
 *
 * @example
 * const edits = new JsonEdits();
 * edits.set(['messages', 3, 'content'], 'shorter');
 * applyJsonEdits(original, edits);
 */
export function applyJsonEdits(text: string, edits: JsonEdits): string {
  if (edits.size === 0) return text;
  const start = skipWs(text, 0);
  const span = { start, end: valueEnd(text, start) };
  return text.slice(0, start) + rewrite(text, span, edits.root) + text.slice(span.end);
}
