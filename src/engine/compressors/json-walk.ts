/**
 * Walks over JSON values that copy only what they change. The JSON
 * compressor's steps (cutting arrays, shortening known entities, replacing
 * repeated subtrees, rewriting links) return their input where nothing in it
 * changes: the next step and the renderer then see the same objects (whose
 * JSON and digests are kept per engine call), and nothing is allocated for
 * them. Nothing a step returns is modified afterwards.
 *
 * The walks are module functions that take their state as an argument, not
 * closures made per call: V8 holds a closure's optimized code only while a
 * closure of it is alive, so a full collection between two calls dropped
 * it, and every walk was compiled again after each one (docs/perf.md,
 * twenty-fifth pass).
 */

/** True for objects and arrays. */
export function isContainer(v: unknown): v is object {
  return typeof v === 'object' && v !== null;
}

/** `arr` with each element replaced by `f(element, index, state)`; `arr` itself when every element comes back as it was. */
export function mapElements<S>(
  arr: readonly unknown[],
  f: (c: unknown, i: number, state: S) => unknown,
  state: S,
): readonly unknown[] {
  let out: unknown[] | undefined;
  for (let i = 0; i < arr.length; i++) {
    const c = arr[i];
    const w = f(c, i, state);
    if (w !== c) out ??= arr.slice(0, i);
    out?.push(w);
  }
  return out ?? arr;
}

/**
 * Sets field `k` of a copy being built, as JSON.parse does: a `__proto__`
 * field becomes a field (assignment would set the copy's prototype and drop
 * it from the JSON).
 */
export function setField(out: Record<string, unknown>, k: string, v: unknown): void {
  if (k === '__proto__')
    Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  else out[k] = v;
}

/**
 * `obj` with each field's value replaced by `f(value, key, index, state)`
 * (`keys`: its `Object.keys`); `obj` itself when every value comes back as
 * it was. A copy has the fields in key order.
 */
export function mapFields<S>(
  obj: Record<string, unknown>,
  f: (c: unknown, k: string, i: number, state: S) => unknown,
  state: S,
  keys: readonly string[] = Object.keys(obj),
): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const c = obj[k];
    const w = f(c, k, i, state);
    if (w !== c && out === undefined) {
      out = {};
      for (let j = 0; j < i; j++) setField(out, keys[j]!, obj[keys[j]!]);
    }
    if (out !== undefined) setField(out, k, w);
  }
  return out ?? obj;
}
