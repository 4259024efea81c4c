import { LRUCache } from 'lru-cache';
import { collectEntities } from './compressors/json-entities.js';
import { collectLinkShapes } from './compressors/json-links.js';
import { parseJsonContent } from './compressors/json-parse.js';
import { collectSubtrees } from './compressors/json-subtrees.js';
import { contentHash, contentHashOnce } from './hash.js';
import { extractUserTerms } from './identifiers.js';
import { type KnownLines, type KnownNames, LineSet, NameSet } from './known.js';
import { engineMemoLimit, registerEngineMemo, stringBytes } from './memo-budget.js';
import { searchableText, textUnits } from './messages.js';
import type { ChatMessage } from './types.js';

/** What the scans of messages 0..upTo-1 collected (each scan has its own `upTo`). */
interface Scans {
  seen: NameSet;
  seenUpTo: number;
  lines: LineSet;
  linesUpTo: number;
  subtrees: Set<string>;
  entities: Map<string, Record<string, unknown>>;
  linkShapes: Set<string>;
  subtreesUpTo: number;
  /**
   * Bytes of what the scans keep alive besides their elements: the parsed
   * JSON the entities are part of. (Identifiers and lines are kept as
   * hashes, see known.ts: they hold nothing of the texts.)
   */
  held: number;
}

/** Bytes of an element of a JSON scan's set or map (its string header and its slot). */
const ELEMENT_BYTES = 48;

/** Estimated bytes of `s` (see `Scans.held`). */
function scanBytes(s: Scans): number {
  return (
    256 +
    s.held +
    s.seen.bytes +
    s.lines.bytes +
    ELEMENT_BYTES * (s.subtrees.size + s.entities.size + s.linkShapes.size)
  );
}

function freshScans(): Scans {
  return {
    seen: new NameSet(),
    seenUpTo: 0,
    lines: new LineSet(),
    linesUpTo: 0,
    subtrees: new Set(),
    entities: new Map(),
    linkShapes: new Set(),
    subtreesUpTo: 0,
    held: 0,
  };
}

/** Messages the scans of `s` cover: the largest of their `upTo`s. */
function cover(s: Scans): number {
  return Math.max(s.seenUpTo, s.linesUpTo, s.subtreesUpTo);
}

/**
 * Scans left by earlier requests, under the prefix key of the last message
 * they cover. A conversation re-sent with new messages at the end takes the
 * scans of its previous turn and extends them with the new messages only,
 * instead of rescanning the whole history (principle 4). Exact: the scans
 * are extended in message order, as a fresh scan would build them. A scan
 * taken by a request is removed until that request puts it back. Bounded by
 * their estimated bytes (the server's share of `--memo-max-bytes`, see
 * memo-budget.ts) and by 32 conversations.
 */
let reusable = createReusable(engineMemoLimit('history_scans'));

function createReusable(maxBytes: number): LRUCache<string, Scans> {
  return new LRUCache<string, Scans>({ max: 32, maxSize: maxBytes, sizeCalculation: scanBytes });
}

registerEngineMemo('history_scans', {
  bytes: () => reusable.calculatedSize,
  limit(maxBytes) {
    if (maxBytes !== reusable.maxSize) reusable = createReusable(maxBytes);
  },
});

/**
 * Prefix keys by message object and the key of the messages before it: the
 * proxy hands the engine the same message objects for the part of a
 * conversation it has seen (see `formats/prefix-parse.ts`), which then cost
 * a lookup instead of a fingerprint and a hash each (principle 4). Used only
 * with `reuse`: the proxy never modifies a message it passed in.
 */
const keyAfter = new WeakMap<ChatMessage, { before: string; key: string }>();

/**
 * What the engine may know when it compresses message i: messages 0..i and
 * nothing after (principle 2). Built lazily, in message order.
 */
export class History {
  private readonly prefix: string[] = [];
  private readonly terms = new Map<number, string[]>();
  private scans: Scans | undefined;

  /**
   * @param reuse take and leave scans of earlier requests with the same
   *   prefix (the proxy, where a conversation is re-sent each turn).
   */
  constructor(
    private readonly messages: readonly ChatMessage[],
    private readonly reuse = false,
  ) {}

  /**
   * Hash of messages 0..i (chained), the memo key of anything computed from
   * them. Equal prefixes give equal keys on every later turn.
   */
  prefixKey(i: number): string {
    for (let k = this.prefix.length; k <= i; k++) {
      const msg = this.messages[k]!;
      const before = k === 0 ? '' : this.prefix[k - 1]!;
      const known = this.reuse ? keyAfter.get(msg) : undefined;
      if (known?.before === before) {
        this.prefix.push(known.key);
        continue;
      }
      // a new string each time (its parts are memoized instead): hashed, not looked up
      const key = contentHashOnce(`${before}:${fingerprint(msg)}`);
      if (this.reuse) keyAfter.set(msg, { before, key });
      this.prefix.push(key);
    }
    return this.prefix[i]!;
  }

  /** The scans, for a question about messages before i: taken from an earlier request when one covers a prefix of them. */
  private scansBefore(i: number): Scans {
    if (this.scans) return this.scans;
    if (this.reuse) {
      for (let k = Math.min(i, this.messages.length); k >= 1; k--) {
        const key = this.prefixKey(k - 1);
        const found = reusable.get(key);
        if (found === undefined) continue;
        reusable.delete(key);
        this.scans = found;
        return found;
      }
    }
    this.scans = freshScans();
    return this.scans;
  }

  /**
   * Leaves the scans for later requests, under the prefix key of what they
   * cover. The engine calls it once, when its call ends (finished or out of
   * time: what was scanned is kept either way); the scans are extended no
   * further after it.
   */
  leaveScans(): void {
    const s = this.scans;
    if (!this.reuse || s === undefined) return;
    const n = cover(s);
    if (n > 0) reusable.set(this.prefixKey(n - 1), s);
  }

  /** Identifiers of messages 0..i-1 (their original text and tool-call arguments). */
  seenBefore(i: number): KnownNames {
    const s = this.scansBefore(i);
    if (i < s.seenUpTo) throw new Error('History.seenBefore must be asked in message order');
    for (; s.seenUpTo < i; s.seenUpTo++) {
      s.seen.addText(searchableText(this.messages[s.seenUpTo]!));
    }
    return s.seen;
  }

  /**
   * Trimmed lines (of at least `MIN_LINE_CHARS`) of messages 0..i-1: their
   * text, numbered listings without numbers, and string arguments of tool
   * calls (a file an agent wrote is known when it reads it back).
   */
  linesBefore(i: number): KnownLines {
    const s = this.scansBefore(i);
    if (i < s.linesUpTo) throw new Error('History.linesBefore must be asked in message order');
    for (; s.linesUpTo < i; s.linesUpTo++) {
      const msg = this.messages[s.linesUpTo]!;
      for (const unit of textUnits(msg)) s.lines.addText(unit.text);
      for (const call of msg.tool_calls ?? []) {
        for (const v of argumentStrings(call.function?.arguments ?? '')) s.lines.addText(v);
      }
    }
    return s.lines;
  }

  /** Hashes of the JSON objects and arrays in tool outputs 0..i-1. */
  jsonSubtreesBefore(i: number): ReadonlySet<string> {
    return this.scanJson(i).subtrees;
  }

  /** Entities (objects with an identity) of the JSON in tool outputs 0..i-1, by identity key. */
  jsonEntitiesBefore(i: number): ReadonlyMap<string, Record<string, unknown>> {
    return this.scanJson(i).entities;
  }

  /** Shapes of the objects with derived links in tool outputs 0..i-1 (see `json-links.ts`). */
  jsonLinkShapesBefore(i: number): ReadonlySet<string> {
    return this.scanJson(i).linkShapes;
  }

  private scanJson(i: number): Scans {
    const s = this.scansBefore(i);
    if (i < s.subtreesUpTo) throw new Error('History JSON scans must be asked in message order');
    for (; s.subtreesUpTo < i; s.subtreesUpTo++) {
      const msg = this.messages[s.subtreesUpTo]!;
      if (msg.role !== 'tool' && msg.role !== 'function') continue;
      for (const unit of textUnits(msg)) {
        const parsed = parseJsonContent(unit.text);
        if (!parsed) continue;
        collectSubtrees(parsed.value, s.subtrees);
        const entities = s.entities.size;
        collectEntities(parsed.value, s.entities);
        collectLinkShapes(parsed.value, s.linkShapes);
        // entities are objects of the parsed text: its objects and strings stay alive with them
        if (s.entities.size > entities) s.held += 2 * stringBytes(unit.text);
      }
    }
    return s;
  }

  /** Terms of the most recent user message before message i. */
  userTermsBefore(i: number): string[] {
    let u = i - 1;
    while (u >= 0 && this.messages[u]!.role !== 'user') u--;
    if (u < 0) return [];
    let terms = this.terms.get(u);
    if (!terms) {
      terms = extractUserTerms(
        textUnits(this.messages[u]!)
          .map((t) => t.text)
          .join('\n'),
      );
      this.terms.set(u, terms);
    }
    return terms;
  }
}

/** Strings longer than this stand in a fingerprint as their content hash. */
const FINGERPRINT_HASH_FROM = 64;

/**
 * An exact, compact spelling of a JSON value: JSON, except that a long string
 * is written as `#` and its content hash (memoized by the text, so a text
 * re-sent on every turn is not serialized or hashed again). Injective like
 * the JSON it stands for: a JSON string starts with a quote, never with `#`.
 */
export function fingerprint(value: unknown): string {
  if (typeof value === 'string')
    return value.length > FINGERPRINT_HASH_FROM ? `#${contentHash(value)}` : JSON.stringify(value);
  if (typeof value !== 'object' || value === null) return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    let out = '[';
    for (let k = 0; k < value.length; k++) out += `${k === 0 ? '' : ','}${fingerprint(value[k])}`;
    return `${out}]`;
  }
  let out = '{';
  let first = true;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const v = (value as Record<string, unknown>)[key];
    if (v === undefined || typeof v === 'function') continue;
    out += `${first ? '' : ','}${JSON.stringify(key)}:${fingerprint(v)}`;
    first = false;
  }
  return `${out}}`;
}

/** String values of a tool call's JSON arguments (top level). */
function argumentStrings(args: string): string[] {
  if (!args.startsWith('{')) return [];
  try {
    const parsed: unknown = JSON.parse(args);
    if (typeof parsed !== 'object' || parsed === null) return [];
    return Object.values(parsed).filter((v): v is string => typeof v === 'string');
  } catch {
    return [];
  }
}
