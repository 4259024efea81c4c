/**
 * Entities: JSON objects that carry an identity (`id`, `uuid`, `node_id`,
 * `url`, `sha`). When an output shows an entity already shown in an earlier
 * tool output, only the fields that changed need repeating.
 */

const IDENTITY_FIELDS = ['id', 'uuid', 'node_id', 'url', 'sha'] as const;
/** Objects with fewer fields than this are left whole. */
const MIN_ENTITY_FIELDS = 6;
/** An entity is shortened only if at least this many fields are unchanged. */
const MIN_UNCHANGED = 4;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The identity keys of an object (`id=123`, `url="https://..."`), or none. */
function identityKeys(obj: Record<string, unknown>): string[] {
  if (Object.keys(obj).length < MIN_ENTITY_FIELDS) return [];
  const keys: string[] = [];
  for (const f of IDENTITY_FIELDS) {
    const v = obj[f];
    if ((typeof v === 'string' && v.length >= 3) || (typeof v === 'number' && Number.isInteger(v))) {
      keys.push(`${f}=${JSON.stringify(v)}`);
    }
  }
  return keys;
}

/** Records every entity of a JSON value (at any depth) under its identity keys; later ones win. */
export function collectEntities(value: unknown, into: Map<string, Record<string, unknown>>): void {
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) for (const c of v) walk(c);
    else if (isRecord(v)) {
      for (const k of identityKeys(v)) into.set(k, v);
      for (const c of Object.values(v)) walk(c);
    }
  };
  walk(value);
}

/**
 * Replaces each entity already shown in an earlier output by its identity
 * fields, the fields that changed, and a note counting the unchanged ones
 * (`"…": "[svc: 25 unchanged fields omitted]"`). Returns the new value and
 * how many fields were omitted.
 */
export function shortenKnownEntities(
  value: unknown,
  earlier: ReadonlyMap<string, Record<string, unknown>>,
  note: (unchanged: number) => string,
): { value: unknown; omitted: number } {
  let omitted = 0;
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (!isRecord(v)) return v;
    const keys = identityKeys(v);
    const before = keys.map((k) => earlier.get(k)).find((e) => e !== undefined);
    if (before) {
      const identity = new Set(keys.map((k) => k.slice(0, k.indexOf('='))));
      const out: Record<string, unknown> = {};
      let unchanged = 0;
      for (const [k, c] of Object.entries(v)) {
        if (!identity.has(k) && k in before && JSON.stringify(before[k]) === JSON.stringify(c)) unchanged++;
        else out[k] = walk(c);
      }
      if (unchanged >= MIN_UNCHANGED) {
        omitted += unchanged;
        out['…'] = note(unchanged);
        return out;
      }
    }
    const out: Record<string, unknown> = {};
    for (const [k, c] of Object.entries(v)) out[k] = walk(c);
    return out;
  };
  return { value: walk(value), omitted };
}
