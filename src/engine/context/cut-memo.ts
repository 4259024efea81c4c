import { contentHash } from '../hash.js';
import type { ChatMessage, ContentMemo } from '../types.js';
import type { DroppedSpan } from './drop-marker.js';

/**
 * A cut made for one request: which messages were dropped and which were
 * compressed harder. The proxy remembers it (in the engine memo, keyed by a
 * hash chain of the message prefix it covers) and applies it again on later
 * turns, so that after a cut the forwarded prefix stays byte-identical until
 * the next cut is needed (principle 2; the provider's prompt cache hits).
 */
export interface CutDecision {
  /** Number of leading messages the decision covers. */
  covers: number;
  dropped: DroppedSpan[];
  /** [message index, level] of messages compressed harder. */
  harder: Array<[number, number]>;
}

/** Chained hash of messages 0..i. */
export type PrefixKey = (i: number) => string;

const PREFIX = 'ctx:cut:';

/**
 * A lazy hash chain of the message prefix: key(i) identifies messages[0..i].
 * Used when the engine's pipeline did not provide its own.
 */
export function prefixChain(messages: readonly ChatMessage[]): PrefixKey {
  const chain: string[] = [];
  return (i) => {
    for (let k = chain.length; k <= i; k += 1) {
      chain.push(contentHash(`${k === 0 ? '' : chain[k - 1]}:${contentHash(JSON.stringify(messages[k]))}`));
    }
    return chain[i]!;
  };
}

function parse(text: string | undefined, covers: number): CutDecision | undefined {
  if (!text) return undefined;
  try {
    const d = JSON.parse(text) as CutDecision;
    if (d.covers !== covers || !Array.isArray(d.dropped) || !Array.isArray(d.harder)) return undefined;
    return d;
  } catch {
    return undefined;
  }
}

/** The decision remembered for the longest prefix of these `count` messages (settings `seed`). */
export function findDecision(
  memo: ContentMemo,
  key: PrefixKey,
  count: number,
  seed: string,
): CutDecision | undefined {
  const seedHash = contentHash(seed).slice(0, 8);
  for (let i = count - 1; i >= 0; i -= 1) {
    const found = parse(memo.get(`${PREFIX}${seedHash}:${key(i)}`), i + 1);
    if (found) return found;
  }
  return undefined;
}

/** Remembers the decision for the whole current conversation. */
export function storeDecision(memo: ContentMemo, key: PrefixKey, seed: string, decision: CutDecision): void {
  if (decision.covers === 0) return;
  memo.set(`${PREFIX}${contentHash(seed).slice(0, 8)}:${key(decision.covers - 1)}`, JSON.stringify(decision));
}
