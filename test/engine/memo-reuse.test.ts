import { describe, expect, it } from 'vitest';
import { createEngineMemo } from '../../src/compression.js';
import { compressMessages, type EngineOutput } from '../../src/engine/index.js';
import { tokenizerFor } from '../../src/engine/tokens.js';
import type { ChatMessage, Tokenizer } from '../../src/engine/types.js';
import { generateConversation } from './helpers.js';

/** Everything an engine call produces, as one comparable value. */
function snapshot(out: EngineOutput): unknown {
  return [out.result, [...out.ccrEntries], out.messageOrigin, [...out.changed], out.observations];
}

const fresh = (messages: ChatMessage[]) =>
  snapshot(compressMessages(structuredClone(messages), { model: 'gpt-4o' }));

/**
 * Work carried over between requests (memoized results, token counts, hashes
 * and the history scans of earlier turns) must never change what a request
 * produces: each turn, and each fork of a conversation, compressed with the
 * shared memo equals the same messages compressed from scratch.
 */
describe('memoized work across requests', () => {
  it('a conversation replayed turn by turn gives what fresh runs give', () => {
    const memo = createEngineMemo();
    const convo = generateConversation(7, 30);
    for (let end = 2; end <= convo.length; end += 3) {
      const messages = structuredClone(convo.slice(0, end));
      const viaMemo = snapshot(compressMessages(messages, { model: 'gpt-4o', memo }));
      expect(viaMemo).toEqual(fresh(convo.slice(0, end)));
    }
  });

  it('forks of one prefix and an unrelated conversation in between stay exact', () => {
    const memo = createEngineMemo();
    const a = generateConversation(11, 20);
    const b = generateConversation(12, 20);
    const cut = Math.floor(a.length / 2);
    const forkA = [...a.slice(0, cut), ...b.slice(cut)];
    for (const messages of [a.slice(0, cut), a, b, forkA, a, forkA.slice(0, cut + 3)]) {
      const viaMemo = snapshot(compressMessages(structuredClone(messages), { model: 'gpt-4o', memo }));
      expect(viaMemo).toEqual(fresh(messages));
    }
  });

  it('counts the texts a memoized turn replays once, however long the history', () => {
    // The stats of every turn add up the router's and the dedupe's records of the whole history;
    // with the count memo full (a history longer than it holds), each turn counted all of them again.
    const base = tokenizerFor('gpt-4o');
    const counted: string[] = [];
    const tokenizer: Tokenizer = {
      ...base,
      countText: (text) => {
        counted.push(text);
        return base.countText(text);
      },
    };
    const memo = createEngineMemo();
    const messages = generateConversation(7, 30);
    // a tool output seen again (the dedupe step makes it a reference)
    const longest = messages
      .filter((m) => m.role === 'tool' && typeof m.content === 'string')
      .sort((a, b) => String(b.content).length - String(a.content).length)[0]!;
    messages.push(
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_again', type: 'function', function: { name: 'bash', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'call_again', content: longest.content },
      { role: 'user', content: 'Same again?' },
    );
    const first = compressMessages(messages, { model: 'gpt-4o', memo }, { tokenizer });
    const applied = first.result.transforms_applied;
    expect(applied.some((t) => t.startsWith('router:'))).toBe(true);
    expect(applied.some((t) => t.startsWith('dedupe:'))).toBe(true);
    counted.length = 0;
    const again = compressMessages([...messages], { model: 'gpt-4o', memo }, { tokenizer });
    expect(again.result.transforms_applied).toEqual(applied);
    const originals = new Set(messages.map((m) => (typeof m.content === 'string' ? m.content : '')));
    expect(counted.filter((text) => originals.has(text))).toEqual([]);
  });

  it("reads the router's memo in its own form only: an entry in another form is compressed again", () => {
    const convo = generateConversation(7, 30);
    const memo = new Map<string, string>();
    const first = snapshot(compressMessages(structuredClone(convo), { model: 'gpt-4o', memo }));
    const routed = [...memo.keys()].filter((k) => k.startsWith('svc-router:'));
    expect(routed.length).toBeGreaterThan(5);
    // the form is not JSON: a compressed text is kept as it is, after its type and a flag
    const compressed = routed.map((k) => memo.get(k)!).filter((v) => !v.endsWith('\u0000-'));
    expect(compressed.length).toBeGreaterThan(0);
    for (const v of compressed) {
      const [type, flag, text] = v.split('\u0000', 3);
      expect(type).toMatch(/^[a-z]+$/);
      expect(['0', '1']).toContain(flag);
      expect(text!.length).toBeGreaterThan(0);
    }
    // as JSON (an earlier form), or cut short: ignored, and the same output comes back
    for (const [n, k] of routed.entries())
      memo.set(k, n % 2 ? JSON.stringify({ type: 'log', text: 'x', lossy: true }) : 'log\u00001');
    expect(snapshot(compressMessages(structuredClone(convo), { model: 'gpt-4o', memo }))).toEqual(first);
    expect(first).toEqual(fresh(convo));
  });
});
