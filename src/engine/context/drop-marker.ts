import { LRUCache } from 'lru-cache';
import { contentHash } from '../hash.js';
import { fingerprint } from '../history.js';
import { formatMarker } from '../markers.js';
import { contentText } from '../tokens.js';
import type { ChatMessage } from '../types.js';
import { errorHits } from './factors.js';

/** A run of dropped messages, replaced by one marker. */
export interface DroppedSpan {
  start: number;
  end: number;
}

const MAX_NOTE = 200;
/** Paths and file names; the lookbehinds scan each run once (see `SALIENT_PATTERNS` in factors.ts). */
const PATH_RE =
  /(?<![\w.-]|[\w.-]\/)(?:[\w.-]+\/)+[\w.-]+\.\w+|\b(?<!\w-*)[\w-]+\.(?:ts|tsx|js|jsx|mjs|py|go|rs|java|rb|c|h|cpp|json|ya?ml|toml|md|sql|sh|css|html|txt|log)\b/g;

function filesOf(message: ChatMessage): string[] {
  const out: string[] = [];
  for (const call of message.tool_calls ?? []) {
    for (const m of (call.function?.arguments ?? '').matchAll(PATH_RE)) out.push(m[0]);
  }
  return out;
}

/**
 * One-line summary of dropped messages: tool names (with counts), files the
 * tool calls named, how many messages show errors.
 *
 * @example summarizeDropped(msgs) // 'tools: bash x3, read_file; files: src/a.ts +2; 1 error'
 */
export function summarizeDropped(messages: readonly ChatMessage[]): string {
  const tools = new Map<string, number>();
  const files: string[] = [];
  let errors = 0;
  for (const m of messages) {
    for (const call of m.tool_calls ?? []) {
      const name = call.function?.name ?? 'tool';
      tools.set(name, (tools.get(name) ?? 0) + 1);
    }
    for (const f of filesOf(m)) if (!files.includes(f)) files.push(f);
    if (
      (m.role === 'tool' || m.is_error === true) &&
      (m.is_error === true || errorHits(contentText(m.content), 1) > 0)
    )
      errors += 1;
  }
  const parts: string[] = [];
  if (tools.size > 0) {
    parts.push(`tools: ${[...tools].map(([name, n]) => (n > 1 ? `${name} x${n}` : name)).join(', ')}`);
  } else {
    const roles = [...new Set(messages.map((m) => m.role))];
    parts.push(`${roles.join('/')} messages`);
  }
  if (files.length > 0)
    parts.push(`files: ${files.slice(0, 4).join(', ')}${files.length > 4 ? ` +${files.length - 4}` : ''}`);
  if (errors > 0) parts.push(`${errors} error${errors === 1 ? '' : 's'}`);
  let note = parts.join('; ').replace(/[()\]\n]/g, ' ');
  if (note.length > MAX_NOTE) note = `${note.slice(0, MAX_NOTE - 3)}...`;
  return note;
}

interface Made {
  hash: string;
  original: string;
  note: string;
}

/**
 * What earlier requests made for a dropped span, keyed by the span's exact
 * fingerprint (or, cheaper, its start and the prefix key of its last message): after a cut every later turn drops the same span again, and
 * serializing, hashing and summarizing it each time would grow with the
 * history (principle 4). Bounded by the characters it holds.
 */
const made = new LRUCache<string, Made>({
  maxSize: 16 * 1024 * 1024,
  sizeCalculation: (m, key) => m.original.length + key.length + m.note.length + 64,
});

/**
 * The CCR entry and the marker message that replace a dropped span. The
 * stored original is the JSON array of the span's original messages.
 * `prefixKey`, when given, must be that of `originals` (see `History.prefixKey`).
 */
export function dropMarker(
  originals: readonly ChatMessage[],
  span: DroppedSpan,
  prefixKey?: (i: number) => string,
): { hash: string; original: string; message: ChatMessage } {
  const dropped = originals.slice(span.start, span.end);
  // The prefix key through the span's last message, with its start, names exactly its messages.
  const key = prefixKey ? `${span.start}@${prefixKey(span.end - 1)}` : fingerprint(dropped);
  let m = made.get(key);
  if (m === undefined) {
    const original = JSON.stringify(dropped);
    m = { hash: contentHash(original), original, note: summarizeDropped(dropped) };
    made.set(key, m);
  }
  const text = formatMarker({ hash: m.hash, omitted: dropped.length, unit: 'messages', note: m.note });
  return { hash: m.hash, original: m.original, message: { role: 'user', content: text } };
}

/** Merges sorted dropped message indices into contiguous spans. */
export function spansOf(dropped: readonly number[]): DroppedSpan[] {
  const spans: DroppedSpan[] = [];
  for (const i of [...dropped].sort((a, b) => a - b)) {
    const last = spans[spans.length - 1];
    if (last && last.end === i) last.end = i + 1;
    else spans.push({ start: i, end: i + 1 });
  }
  return spans;
}
