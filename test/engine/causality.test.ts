import { describe, expect, it } from 'vitest';
import { compressMessages } from '../../src/engine/index.js';
import type { ChatMessage } from '../../src/engine/types.js';
import { generateConversation, rng } from './helpers.js';

/** The scorer's pairing rule: every tool message answers an open call, every call is answered. */
function pairingIntact(messages: readonly ChatMessage[]): boolean {
  const open = new Map<string, number>();
  for (const m of messages) {
    for (const c of m.tool_calls ?? []) open.set(c.id, (open.get(c.id) ?? 0) + 1);
    if (m.role === 'tool') {
      const n = open.get(m.tool_call_id ?? '') ?? 0;
      if (n === 0) return false;
      open.set(m.tool_call_id!, n - 1);
    }
  }
  return [...open.values()].every((n) => n === 0);
}

const SEEDS = [1, 2, 3, 4, 5, 6, 7, 8];

describe('causality and determinism (principle 2)', () => {
  it.each(SEEDS)(
    'prefix [0..k] and [0..n] compress every message 0..k identically, user messages included (seed %i)',
    (seed) => {
      const all = generateConversation(seed);
      const rand = rng(seed * 31);
      for (let trial = 0; trial < 3; trial++) {
        const n = 2 + Math.floor(rand() * (all.length - 2));
        const k = 1 + Math.floor(rand() * (n - 1));
        const short = structuredClone(all.slice(0, k + 1));
        const long = structuredClone(all.slice(0, n + 1));
        const a = compressMessages(short, { model: 'gpt-4o' }).result.messages;
        const b = compressMessages(long, { model: 'gpt-4o' }).result.messages;
        for (let i = 0; i <= k; i++) {
          expect(JSON.stringify(a[i]), `seed ${seed} k=${k} n=${n} message ${i}`).toBe(JSON.stringify(b[i]));
        }
      }
    },
  );

  it.each(SEEDS)('is deterministic, keeps tool pairs, and valid JSON stays valid (seed %i)', (seed) => {
    const input = generateConversation(seed);
    const one = compressMessages(structuredClone(input), { model: 'gpt-4o' });
    expect(one.changed.size, 'the generated conversation must exercise compression').toBeGreaterThan(0);
    expect(one.ccrEntries.size).toBeGreaterThan(0);
    const two = compressMessages(structuredClone(input), { model: 'gpt-4o' });
    expect(JSON.stringify(one.result)).toBe(JSON.stringify(two.result));
    expect(pairingIntact(one.result.messages)).toBe(true);
    expect(one.result.messages.map((m) => m.role)).toEqual(input.map((m) => m.role));
    input.forEach((m, i) => {
      if (m.role !== 'tool' || typeof m.content !== 'string') return;
      try {
        JSON.parse(m.content);
      } catch {
        return;
      }
      const out = one.result.messages[i]!.content as string;
      const body = out
        .split('\n')
        .filter((l) => !l.startsWith('[svc: '))
        .join('\n');
      expect(() => JSON.parse(body), `seed ${seed} message ${i}`).not.toThrow();
    });
  });
});
