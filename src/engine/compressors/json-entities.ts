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
  if (Array.isArray(value)) for (const c of value) collectEntities(c, into);
  else if (isRecord(value)) {
    const fields = Object.keys(value);
    for (const k of identityKeys(value, fields.length)) into.set(k, value);
    for (const f of fields) collectEntities(value[f], into);
  }
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
  const walk: EntityWalk = { earlier, note, omitted: 0 };
  return { value: shortened(value, walk), omitted: walk.omitted };
}

/** A `shortenKnownEntities` walk. */
interface EntityWalk {
  readonly earlier: ReadonlyMap<string, Record<string, unknown>>;
  readonly note: (unchanged: number) => string;
  omitted: number;
}

function shortened(v: unknown, walk: EntityWalk): unknown {
  if (typeof v !== 'object' || v === null) return v;
  if (Array.isArray(v)) return mapElements(v, shortenedElement, walk);
  const obj = v as Record<string, unknown>;
  const fields = Object.keys(obj);
  const keys = walk.earlier.size > 0 ? identityKeys(obj, fields.length) : NO_KEYS;
  let before: Record<string, unknown> | undefined;
  for (let i = 0; i < keys.length && before === undefined; i++) before = walk.earlier.get(keys[i]!);
  if (before) {
    const identity = new Set<string>();
    for (const k of keys) identity.add(k.slice(0, k.indexOf('=')));
    // each field compared once: the fields shown again as they were
    const same = new Uint8Array(fields.length);
    let unchanged = 0;
    for (let f = 0; f < fields.length; f++) {
      const k = fields[f]!;
      if (
        !identity.has(k) &&
        Object.hasOwn(before, k) &&
        JSON.stringify(before[k]) === JSON.stringify(obj[k])
      ) {
        same[f] = 1;
        unchanged++;
      }
    }
    if (unchanged >= MIN_UNCHANGED) {
      const out: Record<string, unknown> = {};
      for (let f = 0; f < fields.length; f++)
        if (!same[f]) setField(out, fields[f]!, shortened(obj[fields[f]!], walk));
      walk.omitted += unchanged;
      out['…'] = walk.note(unchanged);
      return out;
    }
  }
  return mapFields(obj, shortenedField, walk, fields);
}

function shortenedElement(c: unknown, _i: number, walk: EntityWalk): unknown {
  return shortened(c, walk);
}

function shortenedField(c: unknown, _k: string, _i: number, walk: EntityWalk): unknown {
  return shortened(c, walk);
}
