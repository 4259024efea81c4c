import { mapElements, mapFields, setField } from './json-walk.js';

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

const NO_KEYS: readonly string[] = [];

/** The identity keys of an object (`id=123`, `url="https://..."`), or none; `fields` are its keys. */
function identityKeys(obj: Record<string, unknown>, fields: number): readonly string[] {
  if (fields < MIN_ENTITY_FIELDS) return NO_KEYS;
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
      const fields = Object.keys(v);
      for (const k of identityKeys(v, fields.length)) into.set(k, v);
      for (const f of fields) walk(v[f]);
    }
  };
  walk(value);
}

/**
 * Replaces each entity already shown in an earlier output by its identity
 * fields, the fields that changed, and a note counting the unchanged ones
 * (`"…": "[svc: 25 unchanged fields omitted]"`). Returns the new value
 * (`value` itself where nothing changes) and how many fields were omitted.
 */
export function shortenKnownEntities(
  value: unknown,
  earlier: ReadonlyMap<string, Record<string, unknown>>,
  note: (unchanged: number) => string,
): { value: unknown; omitted: number } {
  let omitted = 0;
  const walk = (v: unknown): unknown => {
    if (typeof v !== 'object' || v === null) return v;
    if (Array.isArray(v)) return mapElements(v, walk);
    const obj = v as Record<string, unknown>;
    const fields = Object.keys(obj);
    const keys = earlier.size > 0 ? identityKeys(obj, fields.length) : NO_KEYS;
    let before: Record<string, unknown> | undefined;
    for (let i = 0; i < keys.length && before === undefined; i++) before = earlier.get(keys[i]!);
    if (before) {
      const identity = new Set(keys.map((k) => k.slice(0, k.indexOf('='))));
      let unchanged = 0;
      for (const k of fields) {
        const c = obj[k];
        if (!identity.has(k) && Object.hasOwn(before, k) && JSON.stringify(before[k]) === JSON.stringify(c))
          unchanged++;
      }
      if (unchanged >= MIN_UNCHANGED) {
        const out: Record<string, unknown> = {};
        for (const k of fields) {
          const c = obj[k];
          if (!identity.has(k) && Object.hasOwn(before, k) && JSON.stringify(before[k]) === JSON.stringify(c))
            continue;
          setField(out, k, walk(c));
        }
        omitted += unchanged;
        out['…'] = note(unchanged);
        return out;
      }
    }
    return mapFields(obj, walk, fields);
  };
  return { value: walk(value), omitted };
}
