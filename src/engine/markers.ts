/**
 * The one marker format. Every piece of content the engine removes is stored
 * in the CCR store under its hash, and replaced by a marker that says what was
 * removed and how to get it back (principle 3).
 *
 * Example: `[svc: 87 items omitted; retrieve with svc_retrieve hash=3fa9c2e1b4d5a6f7c8d9e0a1]`
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

/** Finds every marker in a text. */
export function parseMarkers(text: string): MarkerInfo[] {
  const found: MarkerInfo[] = [];
  for (const m of text.matchAll(MARKER_RE)) {
    const info: MarkerInfo = { hash: m[4]!, omitted: Number(m[1]), unit: m[2] as MarkerUnit };
    if (m[3]) info.note = m[3];
    found.push(info);
  }
  return found;
}

/** True when the text holds at least one marker. */
export function hasMarker(text: string): boolean {
  return text.includes('[svc: ') && parseMarkers(text).length > 0;
}
