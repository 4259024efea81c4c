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

const PREFIX = 'ctx:cut:';

/**
 * Hash chain of the message prefix: entry i identifies messages[0..i]
 * (under the given settings seed). Cost grows with the messages' size only
 * on requests that are over the limit.
 */
export function prefixChain(messages: readonly ChatMessage[], seed: string): string[] {
  const chain: string[] = [];
  let prev = contentHash(seed);
  for (const m of messages) {
    prev = contentHash(`${prev}:${contentHash(JSON.stringify(m))}`);
    chain.push(prev);
  }
  return chain;
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

/** The decision of the longest earlier prefix of this conversation, if remembered. */
export function findDecision(memo: ContentMemo, chain: readonly string[]): CutDecision | undefined {
  for (let i = chain.length - 1; i >= 0; i -= 1) {
    const found = parse(memo.get(PREFIX + chain[i]), i + 1);
    if (found) return found;
  }
  return undefined;
}

/** Remembers the decision for the whole current conversation. */
export function storeDecision(memo: ContentMemo, chain: readonly string[], decision: CutDecision): void {
  const last = chain[decision.covers - 1];
  if (last) memo.set(PREFIX + last, JSON.stringify(decision));
}
