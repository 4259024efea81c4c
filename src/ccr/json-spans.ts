/**
 * Byte-exact spans of JSON array items inside a JSON text, so a query can
 * return matching items exactly as they were stored (no re-serialization).
 * Assumes `text` is valid JSON (callers check with JSON.parse first).
 */

/** [start, end) of one value in the text. */
export type Span = [number, number];

const WS = new Set([' ', '\t', '\n', '\r']);

function skipWs(text: string, i: number): number {
  let k = i;
  while (k < text.length && WS.has(text[k]!)) k += 1;
  return k;
}

function endOfString(text: string, i: number): number {
  let k = i + 1;
  while (k < text.length) {
    const c = text[k]!;
    if (c === '\\') k += 2;
    else if (c === '"') return k + 1;
    else k += 1;
  }
  return k;
}

/** End (exclusive) of the value starting at `i`. */
function endOfValue(text: string, i: number): number {
  const c = text[i];
  if (c === '"') return endOfString(text, i);
  if (c === '{' || c === '[') {
    let depth = 0;
    let k = i;
    while (k < text.length) {
      const d = text[k]!;
      if (d === '"') {
        k = endOfString(text, k);
        continue;
      }
      if (d === '{' || d === '[') depth += 1;
      else if (d === '}' || d === ']') {
        depth -= 1;
        if (depth === 0) return k + 1;
      }
      k += 1;
    }
    return k;
  }
  let k = i;
  while (k < text.length && !WS.has(text[k]!) && text[k] !== ',' && text[k] !== ']' && text[k] !== '}')
    k += 1;
  return k;
}

/** Spans of the items of the array that starts at `open` (a `[`). */
export function arrayItemSpans(text: string, open: number): Span[] {
  const spans: Span[] = [];
  let k = skipWs(text, open + 1);
  if (text[k] === ']') return spans;
  while (k < text.length) {
    const end = endOfValue(text, k);
    spans.push([k, end]);
    k = skipWs(text, end);
    if (text[k] !== ',') break;
    k = skipWs(text, k + 1);
  }
  return spans;
}

/** Spans of the top-level members of the object at `open`: key and value. */
export function objectMemberSpans(text: string, open: number): Array<{ key: string; value: Span }> {
  const out: Array<{ key: string; value: Span }> = [];
  let k = skipWs(text, open + 1);
  while (k < text.length && text[k] === '"') {
    const keyEnd = endOfString(text, k);
    const key = JSON.parse(text.slice(k, keyEnd)) as string;
    k = skipWs(text, keyEnd);
    k = skipWs(text, k + 1); // past ':'
    const end = endOfValue(text, k);
    out.push({ key, value: [k, end] });
    k = skipWs(text, end);
    if (text[k] !== ',') break;
    k = skipWs(text, k + 1);
  }
  return out;
}
