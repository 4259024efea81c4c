/**
 * Lossless JSON rendering: minified, with arrays of uniform records in
 * columnar form where that is shorter:
 * `[{"id":1,"ok":true},{"id":2,"ok":false}]` -> `{"$columns":["id","ok"],"$rows":[[1,true],[2,false]]}`.
 */

const MIN_COLUMNAR_ROWS = 3;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The shared key list of an array of records with identical keys in identical order, else null. */
function uniformKeys(arr: readonly unknown[]): string[] | null {
  if (arr.length < MIN_COLUMNAR_ROWS || !arr.every(isRecord)) return null;
  const keys = Object.keys(arr[0] as Record<string, unknown>);
  if (keys.length < 2) return null;
  const sig = keys.join('\u0000');
  for (const item of arr)
    if (Object.keys(item as Record<string, unknown>).join('\u0000') !== sig) return null;
  return keys;
}

/** Minified JSON with uniform record arrays in columnar form where shorter (by characters). */
export function renderCompact(value: unknown): string {
  if (Array.isArray(value)) {
    const plain = `[${value.map(renderCompact).join(',')}]`;
    const keys = uniformKeys(value);
    if (!keys) return plain;
    const rows = value.map(
      (it) => `[${keys.map((k) => renderCompact((it as Record<string, unknown>)[k])).join(',')}]`,
    );
    const columnar = `{"$columns":${JSON.stringify(keys)},"$rows":[${rows.join(',')}]}`;
    return columnar.length < plain.length * 0.85 ? columnar : plain;
  }
  if (isRecord(value)) {
    const parts: string[] = [];
    for (const [k, v] of Object.entries(value))
      if (v !== undefined) parts.push(`${JSON.stringify(k)}:${renderCompact(v)}`);
    return `{${parts.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
