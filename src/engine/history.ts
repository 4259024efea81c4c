import { collectEntities } from './compressors/json-entities.js';
import { collectLinkShapes } from './compressors/json-links.js';
import { parseJsonContent } from './compressors/json-parse.js';
import { collectSubtrees } from './compressors/json-subtrees.js';
import { contentHash } from './hash.js';
import { collectIdentifiers, extractUserTerms } from './identifiers.js';
import { searchableText, textUnits } from './messages.js';
import type { ChatMessage } from './types.js';

/**
 * What the engine may know when it compresses message i: messages 0..i and
 * nothing after (principle 2). Built lazily, in message order.
 */
export class History {
  private readonly prefix: string[] = [];
  private readonly seen = new Set<string>();
  private seenUpTo = 0;
  private readonly terms = new Map<number, string[]>();
  private readonly lines = new Set<string>();
  private linesUpTo = 0;
  private readonly subtrees = new Set<string>();
  private readonly entities = new Map<string, Record<string, unknown>>();
  private readonly linkShapes = new Set<string>();
  private subtreesUpTo = 0;

  constructor(private readonly messages: readonly ChatMessage[]) {}

  /**
   * Hash of messages 0..i (chained), the memo key of anything computed from
   * them. Equal prefixes give equal keys on every later turn.
   */
  prefixKey(i: number): string {
    for (let k = this.prefix.length; k <= i; k++) {
      const own = contentHash(JSON.stringify(this.messages[k]));
      this.prefix.push(contentHash(`${k === 0 ? '' : this.prefix[k - 1]}:${own}`));
    }
    return this.prefix[i]!;
  }

  /** Identifiers of messages 0..i-1 (their original text and tool-call arguments). */
  seenBefore(i: number): ReadonlySet<string> {
    if (i < this.seenUpTo) throw new Error('History.seenBefore must be asked in message order');
    for (; this.seenUpTo < i; this.seenUpTo++)
      collectIdentifiers(searchableText(this.messages[this.seenUpTo]!), this.seen);
    return this.seen;
  }

  /**
   * Trimmed lines (of at least `MIN_LINE_CHARS`) of messages 0..i-1: their
   * text, numbered listings without numbers, and string arguments of tool
   * calls (a file an agent wrote is known when it reads it back).
   */
  linesBefore(i: number): ReadonlySet<string> {
    if (i < this.linesUpTo) throw new Error('History.linesBefore must be asked in message order');
    for (; this.linesUpTo < i; this.linesUpTo++) {
      const msg = this.messages[this.linesUpTo]!;
      for (const unit of textUnits(msg)) addLines(unit.text, this.lines);
      for (const call of msg.tool_calls ?? []) {
        for (const v of argumentStrings(call.function?.arguments ?? '')) addLines(v, this.lines);
      }
    }
    return this.lines;
  }

  /** Hashes of the JSON objects and arrays in tool outputs 0..i-1. */
  jsonSubtreesBefore(i: number): ReadonlySet<string> {
    this.scanJson(i);
    return this.subtrees;
  }

  /** Entities (objects with an identity) of the JSON in tool outputs 0..i-1, by identity key. */
  jsonEntitiesBefore(i: number): ReadonlyMap<string, Record<string, unknown>> {
    this.scanJson(i);
    return this.entities;
  }

  /** Shapes of the objects with derived links in tool outputs 0..i-1 (see `json-links.ts`). */
  jsonLinkShapesBefore(i: number): ReadonlySet<string> {
    this.scanJson(i);
    return this.linkShapes;
  }

  private scanJson(i: number): void {
    if (i < this.subtreesUpTo) throw new Error('History JSON scans must be asked in message order');
    for (; this.subtreesUpTo < i; this.subtreesUpTo++) {
      const msg = this.messages[this.subtreesUpTo]!;
      if (msg.role !== 'tool' && msg.role !== 'function') continue;
      for (const unit of textUnits(msg)) {
        const parsed = parseJsonContent(unit.text);
        if (!parsed) continue;
        collectSubtrees(parsed.value, this.subtrees);
        collectEntities(parsed.value, this.entities);
        collectLinkShapes(parsed.value, this.linkShapes);
      }
    }
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

/** Lines shorter than this (trimmed) are too common to identify repeated content. */
export const MIN_LINE_CHARS = 8;

/** Normal form of a line for repeat detection: line number of a listing and outer whitespace removed. */
export function lineKey(line: string): string {
  return line.replace(/^ *\d+(?:→|\t)/, '').trim();
}

function addLines(text: string, into: Set<string>): void {
  for (const line of text.split('\n')) {
    const key = lineKey(line);
    if (key.length >= MIN_LINE_CHARS) into.add(key);
  }
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
