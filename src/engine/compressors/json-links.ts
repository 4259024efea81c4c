/**
 * Hypermedia links (REST APIs such as GitHub's): an object with its own `url`
 * often carries many link fields that only extend it
 * (`"labels_url": "https://api.github.com/repos/o/r/issues/2/labels{/name}"`).
 * Once an object of the same shape has been shown in full, later ones write
 * those links relative to their own url (`"labels_url": "{url}/labels{/name}"`):
 * nothing is lost, every link is rebuilt by substituting the url back.
 */

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

function derivedLink(base: unknown, value: unknown): value is string {
  return (
    typeof base === 'string' &&
    base.length >= MIN_URL &&
    /^https?:\/\//.test(base) &&
    typeof value === 'string' &&
    value.startsWith(base) &&
    (value[base.length] === '/' || value[base.length] === '{')
  );
}

/** Shapes of the objects (at any depth) that carry derived links, for `relativizeLinks`. */
export function collectLinkShapes(value: unknown, into: Set<string>): void {
  if (Array.isArray(value)) for (const c of value) collectLinkShapes(c, into);
  else if (isRecord(value)) {
    if (Object.entries(value).some(([k, c]) => k !== URL_FIELD && derivedLink(value[URL_FIELD], c)))
      into.add(shapeOf(value));
    for (const c of Object.values(value)) collectLinkShapes(c, into);
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
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (!isRecord(v)) return v;
    const base = v[URL_FIELD];
    const shape = shapeOf(v);
    const known = shown.has(shape) || local.has(shape);
    const out: Record<string, unknown> = {};
    let links = 0;
    for (const [k, c] of Object.entries(v)) {
      if (k !== URL_FIELD && derivedLink(base, c)) {
        links++;
        if (known) {
          out[k] = `{url}${c.slice((base as string).length)}`;
          rewritten++;
          continue;
        }
      }
      out[k] = walk(c);
    }
    if (links > 0) local.add(shape);
    return out;
  };
  return { value: walk(value), rewritten };
}
