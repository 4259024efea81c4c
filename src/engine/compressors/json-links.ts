/**
 * Hypermedia links (REST APIs such as GitHub's): an object with its own `url`
 * often carries many link fields that only extend it
 * (`"labels_url": "https://api.github.com/repos/o/r/issues/2/labels{/name}"`).
 * Once an object of the same shape has been shown in full, later ones write
 * those links relative to their own url (`"labels_url": "{url}/labels{/name}"`):
 * nothing is lost, every link is rebuilt by substituting the url back.
 */

import { mapElements, mapFields } from './json-walk.js';

const URL_FIELD = 'url';
/** Only urls at least this long are worth substituting. */
const MIN_URL = 20;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The shape of an object: its sorted keys. */
export function shapeOf(obj: Record<string, unknown>): string {
  return Object.keys(obj).sort().join(',');
}

/** True when `base` is a url links may extend (`derivedLink` is false for every value otherwise). */
function linkBase(base: unknown): base is string {
  return typeof base === 'string' && base.length >= MIN_URL && /^https?:\/\//.test(base);
}

/** True when `value` extends `base`, a `linkBase`. */
function extendsBase(base: string, value: unknown): value is string {
  return (
    typeof value === 'string' &&
    value.startsWith(base) &&
    (value[base.length] === '/' || value[base.length] === '{')
  );
}

/** Shapes of the objects (at any depth) that carry derived links, for `relativizeLinks`. */
export function collectLinkShapes(value: unknown, into: Set<string>): void {
  if (Array.isArray(value)) for (const c of value) collectLinkShapes(c, into);
  else if (isRecord(value)) {
    const base = value[URL_FIELD];
    if (linkBase(base))
      for (const k in value)
        if (Object.hasOwn(value, k) && k !== URL_FIELD && extendsBase(base, value[k])) {
          into.add(shapeOf(value));
          break;
        }
    for (const k in value) if (Object.hasOwn(value, k)) collectLinkShapes(value[k], into);
  }
}

/**
 * Writes derived links relative to their object's url, for objects whose
 * shape was shown in full before (in `shown`, or earlier in this value).
 * Returns the new value and the number of links rewritten.
 */
export function relativizeLinks(
  value: unknown,
  shown: ReadonlySet<string>,
): { value: unknown; rewritten: number } {
  const local = new Set<string>();
  let rewritten = 0;
  // a subtree with no link rewritten is returned as it is (the caller only reads the result)
  const walk = (v: unknown): unknown => {
    if (typeof v !== 'object' || v === null) return v;
    if (Array.isArray(v)) return mapElements(v, walk);
    const obj = v as Record<string, unknown>;
    const base = obj[URL_FIELD];
    if (!linkBase(base)) return mapFields(obj, walk);
    // decided before the children are walked: they may add this shape to `local`
    const shape = shapeOf(obj);
    const known = shown.has(shape) || local.has(shape);
    let links = 0;
    const out = mapFields(obj, (c, k) => {
      if (k === URL_FIELD || !extendsBase(base, c)) return walk(c);
      links++;
      if (!known) return c;
      rewritten++;
      return `{url}${c.slice(base.length)}`;
    });
    if (links > 0) local.add(shape);
    return out;
  };
  return { value: walk(value), rewritten };
}
