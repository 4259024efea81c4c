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
  const walk: LinkWalk = { shown, local: new Set<string>(), rewritten: 0, base: '', known: false, links: 0 };
  return { value: relativized(value, walk), rewritten: walk.rewritten };
}

/** A `relativizeLinks` walk: its sets, its count, and the object whose fields are being mapped. */
interface LinkWalk {
  readonly shown: ReadonlySet<string>;
  /** Shapes shown in full earlier in this value. */
  readonly local: Set<string>;
  rewritten: number;
  /** Of the object whose fields `linkField` maps: its url, whether its shape is known, its links. */
  base: string;
  known: boolean;
  links: number;
}

/** `v` with its links relativized; a subtree with no link rewritten is returned as it is (the caller only reads the result). */
function relativized(v: unknown, walk: LinkWalk): unknown {
  if (typeof v !== 'object' || v === null) return v;
  if (Array.isArray(v)) return mapElements(v, relativizedElement, walk);
  const obj = v as Record<string, unknown>;
  const base = obj[URL_FIELD];
  if (!linkBase(base)) return mapFields(obj, relativizedField, walk);
  // decided before the children are walked: they may add this shape to `local`
  const shape = shapeOf(obj);
  // the walk's fields describe this object until its fields are mapped (a field may hold another)
  const { base: outerBase, known: outerKnown, links: outerLinks } = walk;
  walk.base = base;
  walk.known = walk.shown.has(shape) || walk.local.has(shape);
  walk.links = 0;
  const out = mapFields(obj, linkField, walk);
  if (walk.links > 0) walk.local.add(shape);
  walk.base = outerBase;
  walk.known = outerKnown;
  walk.links = outerLinks;
  return out;
}

function relativizedElement(c: unknown, _i: number, walk: LinkWalk): unknown {
  return relativized(c, walk);
}

function relativizedField(c: unknown, _k: string, _i: number, walk: LinkWalk): unknown {
  return relativized(c, walk);
}

/** A field of an object with a url (`walk.base`): a derived link is rewritten when the object's shape is known. */
function linkField(c: unknown, k: string, _i: number, walk: LinkWalk): unknown {
  const base = walk.base;
  if (k === URL_FIELD || !extendsBase(base, c)) return relativized(c, walk);
  walk.links++;
  if (!walk.known) return c;
  walk.rewritten++;
  return `{url}${c.slice(base.length)}`;
}
