import type { CompressFn } from '../../src/compression.js';
import { contentHash } from '../../src/engine/hash.js';
import { formatMarker } from '../../src/engine/markers.js';
import type { ChatMessage, ContentPart, EngineOutput } from '../../src/engine/types.js';

/** Texts at least this long (outside system and the last message) are replaced. */
export const FAKE_THRESHOLD = 200;

function tokens(messages: ChatMessage[]): number {
  return Math.ceil(JSON.stringify(messages).length / 4);
}

/**
 * A deterministic stand-in for the engine: every string content or text part
 * of at least FAKE_THRESHOLD chars, outside system messages and the last
 * message, becomes `FAKE<first 10 chars> + marker`, with the original recorded
 * as a CCR entry. Never mutates its input.
 */
export function createFakeCompress(calls: ChatMessage[][] = []): CompressFn {
  return function fakeCompress(messages): EngineOutput {
    calls.push(messages);
    const ccrEntries = new Map<string, string>();
    const changed = new Set<number>();
    const shrink = (text: string, i: number): string => {
      if (text.length < FAKE_THRESHOLD) return text;
      const hash = contentHash(text);
      ccrEntries.set(hash, text);
      changed.add(i);
      return `FAKE${text.slice(0, 10)} ${formatMarker({ hash, omitted: text.split('\n').length, unit: 'lines' })}`;
    };
    const out = messages.map((msg, i): ChatMessage => {
      if (msg.role === 'system' || msg.role === 'developer' || i === messages.length - 1) return msg;
      if (typeof msg.content === 'string') {
        const content = shrink(msg.content, i);
        return content === msg.content ? msg : { ...msg, content };
      }
      if (Array.isArray(msg.content)) {
        let touched = false;
        const parts = msg.content.map((part): ContentPart => {
          if (part.type !== 'text' || typeof part.text !== 'string') return part;
          const text = shrink(part.text, i);
          if (text === part.text) return part;
          touched = true;
          return { ...part, text };
        });
        return touched ? { ...msg, content: parts } : msg;
      }
      return msg;
    });
    const before = tokens(messages);
    const after = tokens(out);
    return {
      result: {
        messages: out,
        tokens_before: before,
        tokens_after: after,
        tokens_saved: before - after,
        compression_ratio: before > 0 ? after / before : 1,
        transforms_applied: changed.size > 0 ? ['fake:marker'] : [],
        ccr_hashes: [...ccrEntries.keys()],
      },
      ccrEntries,
      messageOrigin: out.map((_, i) => i),
      changed,
    };
  };
}

/** A compressor that always throws (fail-open and 503 paths). */
export const throwingCompress: CompressFn = () => {
  throw new Error('boom: engine exploded');
};
