/** A tool output that is JSON, possibly after a short preamble (`HTTP 200`). */
export interface ParsedJson {
  /** Text before the JSON (kept verbatim), e.g. a status line; may be empty. */
  preamble: string;
  value: unknown;
  /** `lines` for JSON Lines (one value per line); `document` otherwise. */
  shape: 'document' | 'lines';
}

const MAX_PREAMBLE_LINES = 3;
/**
 * Deeper documents are treated as text: the JSON compressors walk values
 * recursively, and 10k nested arrays overflowed the stack (issue 15).
 */
export const MAX_JSON_DEPTH = 256;

/** Whether `text` nests brackets (outside strings) deeper than `max`; one linear scan. */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      if (++depth > max) return true;
    } else if (c === 125 || c === 93) depth--;
  }
  return false;
}

function tryParse(text: string): { ok: true; value: unknown } | { ok: false } {
  const t = text.trim();
  const first = t[0];
  if (first !== '{' && first !== '[') return { ok: false };
  if (nestsDeeperThan(t, MAX_JSON_DEPTH)) return { ok: false };
  try {
    return { ok: true, value: JSON.parse(t) };
  } catch {
    return { ok: false };
  }
}

/** Parses JSON Lines: at least two lines, every non-empty line an object or array. */
export function parseJsonLines(lines: readonly string[]): unknown[] | null {
  const values: unknown[] = [];
  for (const line of lines) {
    if (line.trim() === '') continue;
    const r = tryParse(line);
    if (!r.ok) return null;
    values.push(r.value);
  }
  return values.length >= 2 ? values : null;
}

/** Recognizes JSON content; null when the text is not JSON. */
export function parseJsonContent(text: string): ParsedJson | null {
  const whole = tryParse(text);
  if (whole.ok) return { preamble: '', value: whole.value, shape: 'document' };
  const lines = text.split('\n');
  for (let k = 1; k <= MAX_PREAMBLE_LINES && k < lines.length; k++) {
    const head = lines.slice(0, k);
    if (head.some((l) => l.length > 200 || /^\s*[{[]/.test(l))) break;
    const rest = lines.slice(k).join('\n');
    const r = tryParse(rest);
    if (r.ok)
      return {
        preamble: `${head.join('\n')}\n`,
        value: r.value,
        shape: 'document',
      };
  }
  const jl = parseJsonLines(lines);
  if (jl) return { preamble: '', value: jl, shape: 'lines' };
  return null;
}
