import { callScoped, inCall } from '../call-scope.js';
import { TextMap } from '../text-map.js';

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

/**
 * Whether a parsed value nests objects and arrays deeper than `max` (the
 * value itself is level 1). Asked of the parsed value, not of its text:
 * `JSON.parse` takes any depth, and a walk over the objects is much cheaper
 * than a scan of every character; it stops as soon as it is past `max`. (A
 * document too deep is parsed before it is refused, at the cost of a flat
 * one with as many arrays.)
 */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (max <= 0) return true;
  if (Array.isArray(value)) {
    for (const c of value)
      if (typeof c === 'object' && c !== null && nestsDeeperThan(c, max - 1)) return true;
    return false;
  }
  for (const k in value) {
    const c = (value as Record<string, unknown>)[k];
    if (typeof c === 'object' && c !== null && nestsDeeperThan(c, max - 1)) return true;
  }
  return false;
}

function tryParse(text: string): { ok: true; value: unknown } | { ok: false } {
  const t = text.trim();
  const first = t[0];
  if (first !== '{' && first !== '[') return { ok: false };
  let value: unknown;
  try {
    value = JSON.parse(t);
  } catch {
    return { ok: false };
  }
  return nestsDeeperThan(value, MAX_JSON_DEPTH) ? { ok: false } : { ok: true, value };
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

/**
 * Results of `parseJsonContent` during one engine call, by text: the router
 * detects a type by parsing, the JSON compressor parses the same output, and
 * the history scans parse it again for later messages. Parsed values are
 * never modified (compressors build new ones). Emptied when the engine call
 * ends (`call-scope.ts`), so nothing is kept between requests. Keyed by
 * length (`TextMap`): a `Map` would have V8 hash every new output.
 */
const parsedInCall = callScoped(new TextMap<ParsedJson | null>());
const PARSED_IN_CALL_MAX = 256;
const PARSED_IN_CALL_MAX_CHARS = 4 * 1024 * 1024;

/** Recognizes JSON content; null when the text is not JSON. */
export function parseJsonContent(text: string): ParsedJson | null {
  if (!inCall()) return parseUncached(text);
  const known = parsedInCall.get(text);
  if (known !== undefined) return known;
  const parsed = parseUncached(text);
  if (text.length <= PARSED_IN_CALL_MAX_CHARS && parsedInCall.size < PARSED_IN_CALL_MAX)
    parsedInCall.set(text, parsed);
  return parsed;
}

/** Where line `k` (0-based) of `text` starts, or -1 when it has fewer lines. */
function lineStart(text: string, k: number): number {
  let at = 0;
  for (let n = 0; n < k; n++) {
    const nl = text.indexOf('\n', at);
    if (nl === -1) return -1;
    at = nl + 1;
  }
  return at;
}

/** True when the first line with content opens an object or array (JSON Lines can only start so). */
function firstLineOpens(text: string): boolean {
  const m = /\S/.exec(text);
  return m !== null && (m[0] === '{' || m[0] === '[');
}

function parseUncached(text: string): ParsedJson | null {
  const whole = tryParse(text);
  if (whole.ok) return { preamble: '', value: whole.value, shape: 'document' };
  const head = text.split('\n', MAX_PREAMBLE_LINES + 1);
  for (let k = 1; k <= MAX_PREAMBLE_LINES && k < head.length; k++) {
    const first = head.slice(0, k);
    if (first.some((l) => l.length > 200 || /^\s*[{[]/.test(l))) break;
    const r = tryParse(text.slice(lineStart(text, k)));
    if (r.ok)
      return {
        preamble: `${first.join('\n')}\n`,
        value: r.value,
        shape: 'document',
      };
  }
  // JSON Lines: every line with content an object or array, so the first one too
  if (!firstLineOpens(text)) return null;
  const jl = parseJsonLines(text.split('\n'));
  if (jl) return { preamble: '', value: jl, shape: 'lines' };
  return null;
}
