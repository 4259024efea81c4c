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
  private readonly subtrees = new Set<string>();
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

  /** Hashes of the JSON objects and arrays in tool outputs 0..i-1. */
  jsonSubtreesBefore(i: number): ReadonlySet<string> {
    if (i < this.subtreesUpTo) throw new Error('History.jsonSubtreesBefore must be asked in message order');
    for (; this.subtreesUpTo < i; this.subtreesUpTo++) {
      const msg = this.messages[this.subtreesUpTo]!;
      if (msg.role !== 'tool' && msg.role !== 'function') continue;
      for (const unit of textUnits(msg)) {
        const parsed = parseJsonContent(unit.text);
        if (parsed) collectSubtrees(parsed.value, this.subtrees);
      }
    }
    return this.subtrees;
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
