import { describe, expect, it } from 'vitest';
import { contentHash } from '../../src/engine/hash.js';
import { type ContextStep, compressMessages } from '../../src/engine/index.js';
import { parseMarkers } from '../../src/engine/markers.js';
import { tokenizerFor } from '../../src/engine/tokens.js';
import type { ChatMessage, ContentMemo } from '../../src/engine/types.js';
import { generateConversation } from './helpers.js';

function bigLog(tag: string): string {
  const lines: string[] = [];
  for (let i = 0; i < 200; i++)
    lines.push(
      `2025-03-01T08:00:${String(i % 60).padStart(2, '0')}Z INFO ${tag} handled request ${i} in ${i % 9}ms`,
    );
  lines.splice(120, 0, `2025-03-01T08:02:00Z ERROR ${tag} connection reset by peer`);
  return lines.join('\n');
}

function conversation(): ChatMessage[] {
  return [
    { role: 'system', content: bigLog('system-prompt-is-never-touched') },
    {
      role: 'user',
      content: [
        { type: 'text', text: bigLog('pasted') },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
      ],
    },
    {
      role: 'assistant',
      content: [{ type: 'thinking', thinking: 'look at logs', signature: 'c2ln' }],
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'logs', arguments: '{"svc":"api"}' } },
        { id: 'call_2', type: 'function', function: { name: 'ping', arguments: '{}' } },
      ],
    },
    { role: 'tool', tool_call_id: 'call_1', content: bigLog('api') },
    { role: 'tool', tool_call_id: 'call_2', content: 'pong (small outputs pass unchanged)' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_3', type: 'function', function: { name: 'logs', arguments: '{"svc":"api"}' } },
      ],
    },
    { role: 'tool', tool_call_id: 'call_3', content: bigLog('api') },
    { role: 'user', content: bigLog('latest-user-message') },
  ];
}

describe('compressMessages', () => {
  const input = conversation();
  const out = compressMessages(structuredClone(input), { model: 'gpt-4o' });
  const { result } = out;

  it('never changes the system prompt, user messages, assistant messages or small outputs', () => {
    for (const i of [0, 1, 2, 4, 5, 7]) expect(result.messages[i]).toEqual(input[i]);
  });

  it('never compresses a user message, not even an older one (it was the latest when first sent)', () => {
    expect(JSON.stringify(result.messages[1])).toBe(JSON.stringify(input[1]));
  });

  it("decides a long user message's form once: the same while it is the latest and on every later turn", () => {
    const pasted = bigLog('pasted-alone');
    const turn1: ChatMessage[] = [{ role: 'user', content: pasted }];
    const turn2: ChatMessage[] = [
      ...turn1,
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'logs', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: bigLog('tool-output') },
      { role: 'user', content: 'and now?' },
    ];
    const memo = new Map<string, string>();
    const first = compressMessages(structuredClone(turn1), { model: 'gpt-4o', memo });
    const later = compressMessages(structuredClone(turn2), { model: 'gpt-4o', memo });
    const fresh = compressMessages(structuredClone(turn2), { model: 'gpt-4o' });
    expect(first.result.messages[0]!.content).toBe(pasted);
    expect(later.result.messages[0]!.content).toBe(pasted);
    expect(fresh.result.messages[0]!.content).toBe(pasted);
    // the tool output after it is compressed: the conversation does exercise the router
    expect(later.changed.has(2)).toBe(true);
  });

  it('passes opaque parts of a message through as the same objects', () => {
    const parts = result.messages[1]!.content as Array<{ type: string; text?: string }>;
    expect(parts[1]).toEqual(input[1]!.content![1]);
  });

  it('replaces a tool output identical to an earlier one by a reference to that call', () => {
    expect(result.messages[6]!.content).toMatch(
      /^\[svc: \d+ chars omitted \(identical to the output of call_1\); retrieve with svc_retrieve hash=[0-9a-f]{24}\]$/,
    );
  });

  it('stores the original of every marker under its content hash, and lists the hashes', () => {
    const hashes = result.messages.flatMap((m) => {
      const texts =
        typeof m.content === 'string'
          ? [m.content]
          : (m.content ?? []).map((p) => String((p as { text?: string }).text ?? ''));
      return texts.flatMap((t) => parseMarkers(t).map((mk) => mk.hash));
    });
    expect(hashes.length).toBeGreaterThanOrEqual(2);
    for (const h of hashes) {
      const original = out.ccrEntries.get(h);
      expect(original).toBeDefined();
      expect(contentHash(original!)).toBe(h);
    }
    expect([...result.ccr_hashes].sort()).toEqual([...out.ccrEntries.keys()].sort());
  });

  it('reports exact token counts and colon-separated transforms', () => {
    const tokenizer = tokenizerFor('gpt-4o');
    expect(result.tokens_before).toBe(tokenizer.countMessages(input));
    expect(result.tokens_after).toBe(tokenizer.countMessages(result.messages));
    expect(result.tokens_saved).toBe(result.tokens_before - result.tokens_after);
    expect(result.compression_ratio).toBeCloseTo(result.tokens_after / result.tokens_before, 10);
    expect(result.transforms_applied).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^dedupe:tool:0\.\d\d$/),
        expect.stringMatching(/^router:log:0\.\d\d$/),
      ]),
    );
    for (const t of result.transforms_applied) expect(t).toMatch(/^[a-z]+:[a-z]+:\d+\.\d\d$/);
  });

  it('fills messageOrigin (identity) and the changed set', () => {
    expect(out.messageOrigin).toEqual(input.map((_, i) => i));
    const differs = input.flatMap((m, i) =>
      JSON.stringify(m) === JSON.stringify(result.messages[i]) ? [] : [i],
    );
    expect([...out.changed].sort()).toEqual(differs);
    expect(differs).toEqual([3, 6]);
  });

  it('returns the input untouched when nothing is worth compressing', () => {
    const small: ChatMessage[] = [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hi' },
    ];
    const r = compressMessages(small, { model: 'gpt-4o' });
    expect(r.result.messages[0]).toBe(small[0]);
    expect(r.result.messages[1]).toBe(small[1]);
    expect(r.result.tokens_saved).toBe(0);
    expect(r.result.compression_ratio).toBe(1);
    expect(r.result.transforms_applied).toEqual([]);
    expect(r.changed.size).toBe(0);
  });
});

describe('memoization (options.memo)', () => {
  it('stores per-content results and reuses them on the next turn with identical output', () => {
    const store = new Map<string, string>();
    let sets = 0;
    let hits = 0;
    const memo: ContentMemo = {
      get: (k) => {
        const v = store.get(k);
        if (v !== undefined) hits++;
        return v;
      },
      set: (k, v) => {
        sets++;
        store.set(k, v);
      },
    };
    const convo = generateConversation(11);
    const first = compressMessages(structuredClone(convo), { model: 'gpt-4o', memo });
    expect(sets).toBeGreaterThan(0);
    const firstSets = sets;
    const again = compressMessages(structuredClone(convo), { model: 'gpt-4o', memo });
    expect(sets).toBe(firstSets);
    expect(hits).toBe(firstSets);
    expect(JSON.stringify(again.result)).toBe(JSON.stringify(first.result));
    // a next turn only computes the new message
    const next = [
      ...structuredClone(convo),
      { role: 'assistant', content: 'Done.' },
      { role: 'user', content: 'thanks' },
    ];
    compressMessages(next, { model: 'gpt-4o', memo });
    expect(sets - firstSets).toBeLessThanOrEqual(1);
  });

  it('uses the memoized result instead of recomputing', () => {
    const convo = conversation();
    const store = new Map<string, string>();
    compressMessages(structuredClone(convo), { model: 'gpt-4o', memo: store });
    const key = [...store.keys()].find((k) => k.endsWith(':-1') && store.get(k)!.startsWith('log\u0000'))!;
    // the router's form: type, lossy flag and text, joined by NUL
    const poisoned = 'log\u00000\u0000FROM MEMO';
    for (const k of store.keys()) if (k === key) store.set(k, poisoned);
    const r = compressMessages(structuredClone(convo), { model: 'gpt-4o', memo: store });
    expect(r.result.messages.some((m) => m.content === 'FROM MEMO')).toBe(true);
  });
});

describe('context step hook', () => {
  it('runs after per-message compression and may drop messages', () => {
    const convo = conversation();
    let seen: ChatMessage[] = [];
    const dropSmall: ContextStep = ({ messages, origin }) => {
      seen = messages;
      return {
        messages: messages.filter((_, i) => i !== 4),
        origin: origin.filter((_, i) => i !== 4),
        transforms: ['context:dropped:1'],
      };
    };
    const r = compressMessages(structuredClone(convo), { model: 'gpt-4o' }, { contextStep: dropSmall });
    expect(seen[3]!.content).not.toBe(convo[3]!.content);
    expect(r.messageOrigin).toEqual([0, 1, 2, 3, 5, 6, 7]);
    expect(r.result.messages).toHaveLength(7);
    expect(r.result.transforms_applied).toContain('context:dropped:1');
    expect(r.result.tokens_after).toBe(tokenizerFor('gpt-4o').countMessages(r.result.messages));
  });
});
