import { jsonText } from './json-text.js';

/**
 * Lossless JSON rendering: minified, with arrays of uniform records in
 * columnar form where that is shorter:
 * `[{"id":1,"ok":true},{"id":2,"ok":false}]` -> `{"$columns":["id","ok"],"$rows":[[1,true],[2,false]]}`.
 */

const MIN_COLUMNAR_ROWS = 3;
/** What the columnar form adds around the JSON of its keys and of its rows. */
const COLUMNAR_FRAME = '{"$columns":,"$rows":}'.length;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The shared key list of an array of records with identical keys in identical order, else null. */
function uniformKeys(arr: readonly unknown[]): string[] | null {
  if (arr.length < MIN_COLUMNAR_ROWS || !arr.every(isRecord)) return null;
  const keys = Object.keys(arr[0] as Record<string, unknown>);
  if (keys.length < 2) return null;
  for (let i = 1; i < arr.length; i++) {
    const other = Object.keys(arr[i] as Record<string, unknown>);
    if (other.length !== keys.length) return null;
    for (let k = 0; k < keys.length; k++) if (other[k] !== keys[k]) return null;
  }
  return keys;
}

/** Plain JSON of a value inside an array (where JSON.stringify writes what it leaves out as null). */
function plain(v: unknown): string {
  if (typeof v !== 'object' || v === null) return JSON.stringify(v) ?? 'null';
  return jsonText(v);
}

/**
 * Minified JSON with uniform record arrays in columnar form where shorter
 * (by characters). `value` is a JSON value (what `JSON.parse` returns, or a
 * value built of such values). Parts are written by `jsonText`, once per
 * engine call: `compressJson` renders the whole value, then the value it
 * shortened, which holds many of the same objects.
 */
export function renderCompact(value: unknown): string {
  return withColumns(value) ?? plain(value);
}

/**
 * The compact form of `v` when an array in it takes the columnar form, else
 * null: its compact form is then its plain JSON, which `JSON.stringify`
 * writes far faster than a walk could. Decided bottom-up, so every value is
 * visited once and only the parts that differ from plain JSON are built here.
 */
function withColumns(v: unknown): string | null {
  if (typeof v !== 'object' || v === null) return null;
  if (Array.isArray(v)) {
    const keys = uniformKeys(v);
    if (keys) return recordsWithColumns(v as readonly Record<string, unknown>[], keys);
    let parts: string[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const c = withColumns(v[i]);
      if (c === null && parts === undefined) continue;
      parts ??= v.slice(0, i).map(plain);
      parts.push(c ?? plain(v[i]));
    }
    return parts === undefined ? null : `[${parts.join(',')}]`;
  }
  let parts: string[] | undefined;
  const keys = Object.keys(v);
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const c = withColumns((v as Record<string, unknown>)[k]);
    if (c === null && parts === undefined) continue;
    parts ??= fieldsOf(v as Record<string, unknown>, keys, i);
    const child = (v as Record<string, unknown>)[k];
    if (child !== undefined) parts.push(`${JSON.stringify(k)}:${c ?? plain(child)}`);
  }
  return parts === undefined ? null : `{${parts.join(',')}}`;
}

/** `"key":json` of the first `n` fields of a record (fields JSON leaves out skipped). */
function fieldsOf(obj: Record<string, unknown>, keys: readonly string[], n: number): string[] {
  const parts: string[] = [];
  for (let i = 0; i < n; i++) {
    const k = keys[i]!;
    if (obj[k] !== undefined) parts.push(`${JSON.stringify(k)}:${plain(obj[k])}`);
  }
  return parts;
}

/**
 * The compact form of an array of records sharing `keys`: columnar when that
 * is shorter than the plain form by 15%, else plain; null when that is its
 * plain JSON. Each cell is rendered once, for both forms.
 */
function recordsWithColumns(
  rows: readonly Record<string, unknown>[],
  keys: readonly string[],
): string | null {
  let perRow = 0;
  for (const k of keys) perRow += JSON.stringify(k).length + 1;
  const keysJson = JSON.stringify(keys);
  let cells: string[][] | undefined;
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r]!;
    for (let k = 0; k < keys.length; k++) {
      const c = withColumns(row[keys[k]!]);
      if (c === null && cells === undefined) continue;
      cells ??= plainCells(rows, keys);
      cells[r]![k] = c ?? cells[r]![k]!;
    }
  }
  const rowsJson =
    cells === undefined ? JSON.stringify(rows.map(Object.values)) : `[${cells.map(rowArrayJson).join(',')}]`;
  // a plain item is its row with `"key":` before each cell
  if (COLUMNAR_FRAME + keysJson.length + rowsJson.length < (rowsJson.length + rows.length * perRow) * 0.85)
    return `{"$columns":${keysJson},"$rows":${rowsJson}}`;
  if (cells === undefined) return null;
  const names: string[] = [];
  for (const k of keys) names.push(`${JSON.stringify(k)}:`);
  const items: string[] = [];
  for (const row of cells) {
    const fields: string[] = [];
    for (let k = 0; k < row.length; k++) fields.push(names[k]! + row[k]!);
    items.push(`{${fields.join(',')}}`);
  }
  return `[${items.join(',')}]`;
}

/** The plain JSON of each row's cells, in `keys` order. */
function plainCells(rows: readonly Record<string, unknown>[], keys: readonly string[]): string[][] {
  const cells: string[][] = [];
  for (const it of rows) {
    const row: string[] = [];
    for (const key of keys) row.push(plain(it[key]));
    cells.push(row);
  }
  return cells;
}

function rowArrayJson(row: readonly string[]): string {
  return `[${row.join(',')}]`;
}
