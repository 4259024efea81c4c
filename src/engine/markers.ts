/**
 * The one marker format. Every piece of content the engine removes is stored
 * in the CCR store under its hash, and replaced by a marker that says what was
 * removed and how to get it back (principle 3).
 *
 * Full marker (names the hash; one per compressed text):
 *   `[svc: 87 items omitted; retrieve with svc_retrieve hash=3fa9c2e1b4d5a6f7c8d9e0a1]`
 * Gap note (where a compressed text has several gaps, each gap gets a short
 * note and the text ends with the full marker that covers them all):
 *   `[12 lines omitted]`
 * Repeat note (lossless: the line above it occurred N more times in a row):
 *   `[repeated 12 more times]`
 * Other-files note (search results: files none of whose matches is kept, with their counts):
 *   `[svc: 2 more files with omitted matches: src/a.ts (3), lib/b.ex (1)]`
 * Index note (names that occur only in the omitted part, before the full marker):
 *   `[svc: omitted part mentions: lib/foo.ex, pod-7f9c, ERR_TIMEOUT]`
 * Unchanged note (an entity shown earlier keeps its id and changed fields):
 *   `"…": "[svc: 25 fields unchanged since shown earlier]"`
 * Duplicate note (a JSON value identical to one shown earlier; the text's
 * full marker names the hash of the original):
 *   `[svc: same object as shown earlier]`
 */

/** Name of the retrieval tool the proxy offers, and the marker points to. */
export const RETRIEVE_TOOL_NAME = 'svc_retrieve';

/** What a marker counts. */
export type MarkerUnit = 'items' | 'lines' | 'messages' | 'matches' | 'chars' | 'fields' | 'words';

export interface MarkerInfo {
  hash: string;
  omitted: number;
  unit: MarkerUnit;
  /** Optional short note ("3 errors", "tools: bash, grep"); no newlines. */
  note?: string;
}

const MARKER_RE =
  /\[svc: (\d+) (items|lines|messages|matches|chars|fields|words) omitted(?: \(([^)\]\n]*)\))?; retrieve with svc_retrieve hash=([0-9a-f]{24})\]/g;

/** Renders a marker. */
export function formatMarker(info: MarkerInfo): string {
  const note = info.note ? ` (${info.note.replace(/[()\]\n]/g, ' ').trim()})` : '';
  return `[svc: ${info.omitted} ${info.unit} omitted${note}; retrieve with ${RETRIEVE_TOOL_NAME} hash=${info.hash}]`;
}

/** Renders the short note for one of several gaps in a text that ends with a full marker. */
export function formatGap(omitted: number, unit: MarkerUnit): string {
  return `[${omitted} ${unit} omitted]`;
}

/** Renders the lossless note that the line before it repeats `times` more times. */
export function formatRepeat(times: number): string {
  return `[repeated ${times} more times]`;
}

/** Renders the index of names that occur only in the omitted part of a text. */
export function formatIndex(names: readonly string[]): string {
  return `[svc: omitted part mentions: ${names.join(', ')}]`;
}

/** Renders the list of files whose matches were all omitted from search results (`path (matches)`, ...). */
export function formatOtherFiles(count: number, listed: string): string {
  return `[svc: ${count} more files with omitted matches: ${listed}]`;
}

/** Renders the note that replaces a JSON value identical to one shown earlier. */
export function formatSameAs(kind: 'object' | 'array'): string {
  return `[svc: same ${kind} as shown earlier]`;
}

/** Renders the note that stands for the unchanged fields of an entity shown earlier. */
export function formatUnchanged(fields: number): string {
  return `[svc: ${fields} fields unchanged since shown earlier]`;
}

/** Finds every full marker in a text. */
export function parseMarkers(text: string): MarkerInfo[] {
  const found: MarkerInfo[] = [];
  for (const m of text.matchAll(MARKER_RE)) {
    const info: MarkerInfo = { hash: m[4]!, omitted: Number(m[1]), unit: m[2] as MarkerUnit };
    if (m[3]) info.note = m[3];
    found.push(info);
  }
  return found;
}

/** True when the text holds at least one full marker. */
export function hasMarker(text: string): boolean {
  return text.includes('[svc: ') && parseMarkers(text).length > 0;
}
