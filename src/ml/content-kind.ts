/**
 * Content-type detection for ML compression: JSON is compressed only in its
 * long string values, code is left to the conservative compressors, text
 * (prose, logs) goes to the token classifier.
 */
export type MlContentKind = 'json' | 'code' | 'text';

const CODE_LINE =
  /^\s*(def |class |function |import |from \S+ import|const |let |var |return\b|if \(|for \(|while \(|#include|package |public |private |fn |func |impl |}\s*$|{\s*$|.*;\s*$|@\w+)/;

/** Classifies a piece of content. */
export function detectKind(text: string): MlContentKind {
  const t = text.trimStart();
  if (t.startsWith('{') || t.startsWith('[')) {
    try {
      JSON.parse(text);
      return 'json';
    } catch {
      // not JSON: fall through
    }
  }
  const lines = text.split('\n').filter((l) => l.trim().length > 0);
  if (lines.length >= 5) {
    const codeLines = lines.filter((l) => CODE_LINE.test(l)).length;
    if (codeLines / lines.length >= 0.3) return 'code';
  }
  return 'text';
}

/** Applies `fn` to every string value of at least `minChars` in a JSON value; keys and structure untouched. */
export function mapLongStrings(value: unknown, minChars: number, fn: (s: string) => string): unknown {
  if (typeof value === 'string') return value.length >= minChars ? fn(value) : value;
  if (Array.isArray(value)) return value.map((v) => mapLongStrings(v, minChars, fn));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = mapLongStrings(v, minChars, fn);
    return out;
  }
  return value;
}

/** Collects every string value of at least `minChars` (in walk order). */
export function longStrings(value: unknown, minChars: number, out: string[] = []): string[] {
  if (typeof value === 'string') {
    if (value.length >= minChars) out.push(value);
  } else if (Array.isArray(value)) for (const v of value) longStrings(v, minChars, out);
  else if (value !== null && typeof value === 'object')
    for (const v of Object.values(value)) longStrings(v, minChars, out);
  return out;
}
