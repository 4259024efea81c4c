/**
 * JSON.parse for request bodies that repeat an earlier body's beginning.
 *
 * An agent re-sends its whole conversation on every turn: the body of turn n
 * is the body of turn n-1 plus a few messages. Parsing it whole costs time
 * in proportion to the history, and so does everything after it: each fresh
 * string must be hashed again by every memo that looks it up. This parser
 * keeps the text, the bytes, the parsed messages and their spans of recent
 * bodies; when a new body goes on from one of them (repeats at least its
 * first half) and starts with the same bytes (or characters) up to the end of
 * some message (native comparisons), those messages are reused as they are
 * (the same objects, whose strings V8 has hashed already) and only the rest
 * is decoded and parsed. The result equals `JSON.parse(text)`; the spans of
 * the messages array are handed on to the splicer (`SpanHints`). Work per
 * body then grows with the new messages, not the history (principle 4).
 */

import { isUtf8 } from 'node:buffer';
import { LRUCache } from 'lru-cache';
import { ENTRY_OVERHEAD, stringBytes } from '../engine/memo-budget.js';
import { arrayMemberSpans, detached, type Span, type SpanHints, skipWs, valueEnd } from './spans.js';
import { decodeUtf8 } from './utf8.js';

/** What `PrefixParser.parse` returns. */
export interface ParsedBody {
  /** Equal to `JSON.parse(text)`. */
  value: unknown;
  /** Spans of the messages array of `text`, when it has one. */
  hints: SpanHints | undefined;
  /** Messages taken from an earlier body (0: parsed whole). */
  reused: number;
}

/** One earlier body: its text and what parsing it found. */
interface Snapshot {
  text: string;
  /** The parse of `text` (never modified: the same body again gets this very object). */
  value: Record<string, unknown>;
  /** Members before `messages`, in order. */
  head: Array<[string, unknown]>;
  messages: unknown[];
  /** Where the messages array ends in `text` (after its `]`). */
  close: number;
  /** The members after `messages`, in order (a later body whose text after its messages is the same reuses them). */
  tail: Array<[string, unknown]>;
  /** Span of each message in `text`. */
  spans: Span[];
  /**
   * Spans found inside those messages (by the splicer, `SpanHints`): a reused
   * message sits at the same place in the new text, and so does everything in it.
   */
  found: SpanHints['found'];
  /**
   * The body as received and the UTF-8 byte offset of each message's end,
   * when the body is valid UTF-8 (then `text` is exactly its decoding).
   */
  bytes?: { raw: Buffer; ends: number[] };
}

/**
 * A body seen once: kept as parsed. Where its messages sit is found only if a
 * later body starts like it (most one-off requests never pay for that).
 */
interface Unlaid {
  unlaid: true;
  text: string;
  value: Record<string, unknown>;
  raw: Buffer | undefined;
  found: SpanHints['found'];
}

type Entry = Snapshot | Unlaid;

/** What is kept with each body a parser keeps, besides its text and raw bytes: its estimate counts it. */
export interface KeptWithBodies {
  /** Bytes a parsed message takes besides its strings. */
  messageBytes: number;
  /** A body written from it (the one forwarded) is kept with its messages: counted at the raw body's size. */
  forwardedBody: boolean;
}

/**
 * What the parser alone keeps: a message's objects, arrays, span and byte
 * offset, and spans found in it (~1 KiB; 4 KiB over-counted it by half,
 * test/engine/memo-budget.test.ts), and no other body.
 */
const PARSER_KEEPS: KeptWithBodies = { messageBytes: 1024, forwardedBody: false };

/**
 * What the proxy keeps with each body its parser keeps, in weak maps keyed by
 * the parser's objects and gone with them: the body it forwarded (the splice
 * memo, `splice-memo.ts`; compression makes it smaller than the raw body, the
 * retrieval tool a little larger), and with each message the message read
 * into chat messages (`parseRequest`), the engine's per-message records (its
 * history keys, how it routed and deduplicated the message) and the splice
 * memo's parts. A heap snapshot of `svc serve` after the bench's load of
 * ~91k-token bodies found ~4.1 KB of objects and arrays a message; at 1 KiB
 * the estimate was ~14% under what it held (twenty-third and twenty-fourth
 * passes, docs/perf.md).
 */
export const PROXY_KEEPS: KeptWithBodies = { messageBytes: 4096, forwardedBody: true };

/** Estimated bytes of entries, computed once each (a text's width takes a scan). */
const sizes = new WeakMap<Entry, number>();

/**
 * Estimated bytes an entry keeps alive: its text as V8 stores it (two bytes a
 * character when any is beyond Latin-1), the raw body, the parsed messages
 * (their strings are copies of the text's, mostly one byte a character, plus
 * their objects) and what the parser's owner keeps with them (`keeps`). Messages an
 * entry shares with another one of its conversation are counted with each,
 * so the turns of one conversation are counted above what they hold.
 */
function entryBytes(e: Entry, keeps: KeptWithBodies): number {
  let n = sizes.get(e);
  if (n === undefined) {
    const raw = 'unlaid' in e ? e.raw : e.bytes?.raw;
    const messages = 'unlaid' in e ? (e.value[MESSAGES] as unknown[]).length : e.messages.length;
    const bodies = keeps.forwardedBody ? 2 : 1;
    n =
      stringBytes(e.text) +
      bodies * (raw?.length ?? 0) +
      e.text.length +
      keeps.messageBytes * messages +
      ENTRY_OVERHEAD;
    sizes.set(e, n);
  }
  return n;
}

/** The snapshot of an entry (found now for a body seen once); undefined when it has no messages to reuse. */
function laidOut(entry: Entry): Snapshot | undefined {
  if (!('unlaid' in entry)) return entry;
  const { text, value, raw, found } = entry;
  const spans = arrayMemberSpans(text, value, MESSAGES, { text, found });
  if (!spans || spans.items.length === 0) return undefined;
  const head: Array<[string, unknown]> = [];
  const tail: Array<[string, unknown]> = [];
  let seen = false;
  for (const k of spans.members.keys()) {
    if (k === MESSAGES) seen = true;
    else (seen ? tail : head).push([k, value[k]]);
  }
  const snapshot: Snapshot = {
    text,
    value,
    head,
    messages: value[MESSAGES] as unknown[],
    close: spans.members.get(MESSAGES)!.end,
    tail,
    spans: spans.items,
    found,
  };
  if (raw && isUtf8(raw)) snapshot.bytes = { raw, ends: byteEnds(text, spans.items, [], 0) };
  return snapshot;
}

/**
 * The snapshots of a group that `continues` accepts, with their index, most
 * recent first. A body seen only once is laid out when reached (replaced in
 * place, or removed from the group when it has nothing to reuse); one that
 * `continues` turns down is left as it is.
 */
function* snapshots(group: Entry[], continues: (entry: Entry) => boolean): Generator<[number, Snapshot]> {
  for (let g = 0; g < group.length; ) {
    const entry = group[g]!;
    if (!continues(entry)) {
      g += 1;
      continue;
    }
    const snapshot = laidOut(entry);
    if (!snapshot) {
      group.splice(g, 1);
      continue;
    }
    group[g] = snapshot;
    yield [g, snapshot];
    g += 1;
  }
}

/**
 * True when a body repeats the first half of an earlier one (half of the
 * shorter of the two): one that goes on from it, as the next turn of a
 * conversation does. Another conversation that opens with the same message
 * (runs of one task, an eval harness) or one rewritten from early on shares
 * less, and is parsed whole: reusing its few shared messages would cost more
 * than parsing them (the earlier body laid out, the rest scanned for its
 * messages and joined into a text of its own). One memory comparison.
 */
function goesOnFrom(raw: Buffer, earlier: Buffer | undefined): boolean {
  if (!earlier) return false;
  const half = Math.min(raw.length, earlier.length) >> 1;
  return raw.compare(earlier, 0, half, 0, half) === 0;
}

/** `goesOnFrom` for texts. */
function textGoesOnFrom(text: string, earlier: string): boolean {
  const half = Math.min(text.length, earlier.length) >> 1;
  return text.startsWith(earlier.slice(0, half));
}

/** The bytes an entry was parsed from, when known. */
function rawOf(entry: Entry): Buffer | undefined {
  return 'unlaid' in entry ? entry.raw : entry.bytes?.raw;
}

/**
 * Bodies are grouped by their beginning through the end of the first message
 * (at most this many characters of it), which every later turn repeats; the
 * group is searched for the longest shared prefix.
 */
const KEY_CHARS = 2048;
/** Bytes decoded to find the group of a body (its first message must end within them). */
const HEAD_BYTES = 64 * 1024;
/** Bodies kept per group (conversations that start alike, e.g. the same system prompt). */
const PER_KEY = 4;
const MESSAGES = 'messages';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Parses request bodies, reusing the parse of an earlier body's messages
 * when the new body starts like it. Bounded: it keeps bodies of up to
 * `maxBytes` estimated bytes in all (`entryBytes`; the least recently used
 * leave first).
 */
export class PrefixParser {
  private readonly groups: LRUCache<string, Entry[]>;
  /** Group keys of bodies `knownBytes` gave, so `parseBytes` does not look for them again. */
  private readonly keys = new WeakMap<Buffer, string>();

  /** `keeps`: what the parser's owner keeps with each body (the parser alone by default, or `PROXY_KEEPS`). */
  constructor(
    private readonly maxBytes = 32 * 1024 * 1024,
    private readonly keeps: KeptWithBodies = PARSER_KEEPS,
  ) {
    this.groups = new LRUCache<string, Entry[]>({
      maxSize: maxBytes,
      sizeCalculation: (list, key) => list.reduce((n, e) => n + entryBytes(e, keeps), stringBytes(key)),
    });
  }

  /** Estimated bytes kept: texts, raw bodies and parsed messages (`/metrics`). */
  memoryBytes(): number {
    return this.groups.calculatedSize;
  }

  /** Parses `text` (throws as `JSON.parse` does on invalid JSON). */
  parse(text: string): ParsedBody {
    return this.parseText(text, groupKey(text), undefined);
  }

  /**
   * Decodes (UTF-8) and parses a body. When it repeats an earlier body byte
   * for byte through the end of some message (one memory comparison), only
   * the bytes after that are decoded: the earlier text stands for the rest
   * (decoding is the costliest step left for a long body, above all one with
   * characters beyond Latin-1; see `decodeUtf8`). The text is exactly
   * `raw.toString('utf8')`.
   */
  parseBytes(raw: Buffer): ParsedBody & { text: string } {
    const key = this.keys.get(raw) ?? bytesGroupKey(raw);
    if (key !== undefined) {
      const group = this.groups.get(key) ?? [];
      for (const [g, earlier] of snapshots(group, (e) => goesOnFrom(raw, rawOf(e)))) {
        const before = earlier.bytes;
        if (!before) continue;
        // The same body again (the very bytes `knownBytes` gave, or equal ones): the same parse.
        if (raw === before.raw || (raw.length === before.raw.length && raw.equals(before.raw)))
          return this.again(group, g, earlier);
        const kept = sharedBytes(raw, before);
        if (kept === 0) continue;
        const cut = before.ends[kept - 1]!;
        const rest = raw.subarray(cut);
        // Only valid UTF-8 decodes piecewise exactly as it does whole.
        if (!isUtf8(rest)) break;
        const text = earlier.text.slice(0, earlier.spans[kept - 1]!.end) + decodeUtf8(rest);
        const parsed = continueParse(text, earlier, kept);
        if (!parsed) continue;
        parsed.snapshot.bytes = {
          raw,
          ends: byteEnds(text, parsed.snapshot.spans, before.ends, kept),
        };
        group.splice(g, 1);
        this.remember(key, group, parsed.snapshot);
        return { ...parsed.body, text };
      }
    }
    const text = decodeUtf8(raw);
    return { ...this.parseText(text, key === undefined ? groupKey(text) : key, raw), text };
  }

  /**
   * The bytes of a body kept here that are equal to `chunks` (a body as it
   * arrived, `size` bytes in all), compared piece by piece: a body sent again
   * is then held, parsed and forwarded as those bytes, never joined into a
   * copy of its own (`readBody`). Undefined when no kept body is the same
   * (or the first piece does not hold the body's group key).
   */
  knownBytes(chunks: readonly Buffer[], size: number): Buffer | undefined {
    const first = chunks[0];
    if (!first) return undefined;
    // a key found in the first piece is the key of the whole body (it ends with the first message)
    const key = bytesGroupKey(first);
    const group = key === undefined ? undefined : this.groups.peek(key);
    if (!group) return undefined;
    for (const entry of group) {
      const raw = rawOf(entry);
      if (raw?.length !== size) continue;
      let at = 0;
      for (const chunk of chunks) {
        if (chunk.compare(raw, at, at + chunk.length) !== 0) break;
        at += chunk.length;
      }
      if (at === size) {
        this.keys.set(raw, key!);
        return raw;
      }
    }
    return undefined;
  }

  private parseText(text: string, key: string | undefined, raw: Buffer | undefined): ParsedBody {
    if (key === undefined) return { value: JSON.parse(text) as unknown, hints: undefined, reused: 0 };
    const group = this.groups.get(key) ?? [];
    // (bytes compared where both bodies have them: parseBytes has judged those entries so already)
    const continues = (e: Entry) => {
      const earlierRaw = rawOf(e);
      return raw && earlierRaw ? goesOnFrom(raw, earlierRaw) : textGoesOnFrom(text, e.text);
    };
    for (const [g, earlier] of snapshots(group, continues)) {
      // (with `raw`, parseBytes has compared the bytes already)
      if (raw === undefined && text === earlier.text) {
        const { text: _, ...body } = this.again(group, g, earlier);
        return body;
      }
      const kept = sharedMessages(text, earlier);
      if (kept === 0) continue;
      const parsed = continueParse(text, earlier, kept);
      if (!parsed) continue;
      if (raw !== undefined && isUtf8(raw)) {
        // the earlier body's byte offsets hold for the messages this one repeats
        const known = earlier.bytes;
        parsed.snapshot.bytes = {
          raw,
          ends: byteEnds(text, parsed.snapshot.spans, known?.ends ?? [], known ? kept : 0),
        };
      }
      group.splice(g, 1);
      this.remember(key, group, parsed.snapshot);
      return parsed.body;
    }
    const value = JSON.parse(text) as unknown;
    if (!isRecord(value)) return { value, hints: undefined, reused: 0 };
    // Spans the splicer finds in this body are kept with it for a later turn.
    const hints: SpanHints = { text, found: new WeakMap() };
    const messages = value[MESSAGES];
    if (Array.isArray(messages) && messages.length > 0)
      this.remember(key, group, { unlaid: true, text, value, raw, found: hints.found });
    return { value, hints, reused: 0 };
  }

  /**
   * The parse of a body that is byte for byte the earlier one's (a retry, a
   * sub-agent re-sending its context): the very same value, nothing parsed
   * or decoded; the earlier body becomes the most recent of its group (its
   * estimated size does not change).
   */
  private again(group: Entry[], g: number, earlier: Snapshot): ParsedBody & { text: string } {
    if (g > 0) {
      group.splice(g, 1);
      group.unshift(earlier);
    }
    const { text, value, found } = earlier;
    return { value, hints: { text, found }, reused: earlier.messages.length, text };
  }

  /**
   * Puts `snapshot` first in its group, with the group's most recent entries
   * that fit after it: at most `PER_KEY`, and within the parser's bound. The
   * group is set as a new array: the cache sizes a value when it is set
   * and keeps that size when the same value is set again, so a group grown
   * in place would be counted at its first size and held past the bound.
   */
  private remember(key: string, group: readonly Entry[], snapshot: Entry): void {
    const next = [snapshot];
    let size = stringBytes(key) + entryBytes(snapshot, this.keeps);
    for (const entry of group) {
      if (next.length === PER_KEY) break;
      size += entryBytes(entry, this.keeps);
      if (size > this.maxBytes) break;
      next.push(entry);
    }
    this.groups.set(key, next);
  }
}

/**
 * The group of a body: its text up to the end of its first message (cut at
 * `KEY_CHARS`). Found by a scan of the members before `messages` and of the
 * first message, whose size does not grow with the conversation. Undefined
 * when the body is not an object whose `messages` array has a message.
 */
function groupKey(text: string): string | undefined {
  try {
    let i = skipWs(text, 0);
    if (text.charCodeAt(i) !== 0x7b) return undefined;
    i = skipWs(text, i + 1);
    for (;;) {
      if (text.charCodeAt(i) !== 0x22) return undefined;
      const keyEnd = valueEnd(text, i);
      const name = text.slice(i + 1, keyEnd - 1);
      i = skipWs(text, keyEnd);
      if (text.charCodeAt(i) !== 0x3a) return undefined;
      const start = skipWs(text, i + 1);
      if (name === MESSAGES) {
        if (text.charCodeAt(start) !== 0x5b) return undefined;
        const first = skipWs(text, start + 1);
        if (text.charCodeAt(first) === 0x5d) return undefined;
        return detached(text.slice(0, Math.min(valueEnd(text, first), KEY_CHARS)));
      }
      i = skipWs(text, valueEnd(text, start));
      if (text.charCodeAt(i) !== 0x2c) return undefined;
      i = skipWs(text, i + 1);
    }
  } catch {
    return undefined;
  }
}

/** Bytes of a body's beginning read first to find its group (then 4 times more, up to `HEAD_BYTES`). */
const FIRST_HEAD_BYTES = 4 * 1024;

/**
 * The group key of a body from its first bytes read as Latin-1 (one
 * character per byte, nothing decoded): JSON's structure is ASCII, and no
 * byte of a multi-byte UTF-8 character is. Read in growing pieces: most
 * bodies' first message ends early, and the head is read on every request.
 * A head cut inside the members before the first message's end gives no
 * key (the scan runs past its end); a key only groups bodies, reuse is
 * always checked byte for byte.
 */
function bytesGroupKey(raw: Buffer): string | undefined {
  const limit = Math.min(raw.length, HEAD_BYTES);
  for (let n = Math.min(limit, FIRST_HEAD_BYTES); ; n = Math.min(limit, n * 4)) {
    const key = groupKey(raw.toString('latin1', 0, n));
    if (key !== undefined || n === limit) return key;
  }
}

/**
 * UTF-8 byte offsets of the message ends in `spans`, the first `known` of
 * them taken from `ends` (the text up to there is the same); the rest
 * measured piece by piece, so the work grows with the new messages only.
 */
function byteEnds(text: string, spans: readonly Span[], ends: readonly number[], known: number): number[] {
  const out = ends.slice(0, known);
  let at = known === 0 ? 0 : spans[known - 1]!.end;
  let bytes = known === 0 ? 0 : out[known - 1]!;
  for (let k = known; k < spans.length; k++) {
    bytes += Buffer.byteLength(text.slice(at, spans[k]!.end));
    at = spans[k]!.end;
    out.push(bytes);
  }
  return out;
}

/**
 * The largest n in 0..count for which `same(n)` holds (the first n messages
 * repeat the earlier body's), trying all of them first. Binary search: a body
 * that repeats message k repeats every message before it.
 */
function longestShared(count: number, same: (n: number) => boolean): number {
  if (same(count)) return count;
  let lo = 0;
  let hi = count - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (same(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** How many messages of the earlier body `raw` repeats byte for byte (through the end of the last). */
function sharedBytes(raw: Buffer, earlier: { raw: Buffer; ends: number[] }): number {
  const { ends } = earlier;
  return longestShared(ends.length, (n) => {
    const end = ends[n - 1]!;
    return raw.length > end && raw.compare(earlier.raw, 0, end, 0, end) === 0;
  });
}

/** How many messages of `earlier` `text` repeats character for character (through the end of the last). */
function sharedMessages(text: string, earlier: Snapshot): number {
  const { spans } = earlier;
  return longestShared(spans.length, (n) => {
    const end = spans[n - 1]!.end;
    return text.length > end && text.slice(0, end) === earlier.text.slice(0, end);
  });
}

/**
 * The parse of `text` given that its first `kept` messages are those of
 * `earlier`: the rest of the messages array and the members after it are
 * parsed; undefined when the text does not go on as a body can (then it is
 * parsed whole, and `JSON.parse` reports what is wrong).
 */
function continueParse(
  text: string,
  earlier: Snapshot,
  kept: number,
): { body: ParsedBody; snapshot: Snapshot } | undefined {
  // A `__proto__` member would become the prototype of the object built here: leave those bodies to JSON.parse.
  if (earlier.head.some(isProto) || earlier.tail.some(isProto)) return undefined;
  const spans = earlier.spans.slice(0, kept);
  let i = skipWs(text, spans[kept - 1]!.end);
  try {
    while (text.charCodeAt(i) === 0x2c) {
      const start = skipWs(text, i + 1);
      const end = valueEnd(text, start);
      if (end <= start) return undefined;
      spans.push({ start, end });
      i = skipWs(text, end);
    }
  } catch {
    return undefined;
  }
  if (text.charCodeAt(i) !== 0x5d) return undefined;
  const close = i + 1;
  let added: unknown[] = [];
  let tail: Array<[string, unknown]>;
  try {
    if (spans.length > kept)
      added = JSON.parse(`[${text.slice(spans[kept]!.start, spans.at(-1)!.end)}]`) as unknown[];
    tail = sameTail(text, close, earlier) ? earlier.tail : parseTail(text, close, earlier);
  } catch {
    return undefined;
  }
  if (tail === NOT_A_BODY || added.length !== spans.length - kept) return undefined;
  const messages =
    kept === earlier.messages.length && added.length === 0
      ? earlier.messages
      : [...earlier.messages.slice(0, kept), ...added];
  const value: Record<string, unknown> = {};
  for (const [k, v] of earlier.head) value[k] = v;
  value[MESSAGES] = messages;
  for (const [k, v] of tail) value[k] = v;
  const { found } = earlier;
  found.set(messages, {
    list: spans.map((s, k) => ({ start: s.start, end: s.end, value: messages[k] })),
    close,
  });
  return {
    body: { value, hints: { text, found }, reused: kept },
    snapshot: { text, value, head: earlier.head, messages, close, tail, spans, found },
  };
}

function isProto([key]: [string, unknown]): boolean {
  return key === '__proto__';
}

/** `parseTail`'s answer for a text that does not go on as a body can. */
const NOT_A_BODY: Array<[string, unknown]> = [];

/**
 * True when `text` goes on after its messages array (ending at `close`) as
 * the earlier body's did, character for character and at the same place:
 * then its members after `messages` are the earlier ones. (At another place,
 * after messages added, they are parsed again: the spans found in them, kept
 * with their objects for the splicer, hold for the earlier place only.)
 */
function sameTail(text: string, close: number, earlier: Snapshot): boolean {
  if (close !== earlier.close) return false;
  return text === earlier.text || text.slice(close) === earlier.text.slice(close);
}

/**
 * The members after the messages array (ending at `close`), in order;
 * `NOT_A_BODY` when the text does not end the object there, or when a key
 * would need `JSON.parse`'s own rules for duplicates (it comes before
 * `messages` too, or is `messages` or `__proto__`). Throws on invalid JSON.
 */
function parseTail(text: string, close: number, earlier: Snapshot): Array<[string, unknown]> {
  const after = skipWs(text, close);
  if (text.charCodeAt(after) !== 0x2c) {
    return text.charCodeAt(after) === 0x7d && text.slice(after + 1).trim() === '' ? [] : NOT_A_BODY;
  }
  const members = JSON.parse(`{${text.slice(after + 1)}`) as Record<string, unknown>;
  const tail: Array<[string, unknown]> = [];
  for (const k of Object.keys(members)) {
    if (k === MESSAGES || k === '__proto__' || earlier.head.some(([h]) => h === k)) return NOT_A_BODY;
    tail.push([k, members[k]]);
  }
  return tail;
}
