import { describe, expect, it } from 'vitest';
import { compressMessages } from '../../src/engine/index.js';
import { parseMarkers } from '../../src/engine/markers.js';
import { tokenizerFor } from '../../src/engine/tokens.js';
import type { ChatMessage } from '../../src/engine/types.js';
import { assertValidAnthropic, assertValidChat, toAnthropic } from './anthropic-view.js';
import { agentSession, toolPairsIntact } from './helpers.js';

const tokenizer = tokenizerFor('gpt-4o');
/** Log-like tool outputs: many lines, so compress-harder has something to cut. */
function logSession(rounds: number): ChatMessage[] {
  return agentSession(rounds, 10).map((m) =>
    m.role === 'tool'
      ? {
          ...m,
          content: Array.from(
            { length: 40 },
            (_, k) => `${k} step ${String(m.tool_call_id)} compiled module_${k} ok in ${k * 7}ms`,
          ).join('\n'),
        }
      : m,
  );
}

describe('compressMessages with the context step', () => {
  const msgs = logSession(40);
  const full = tokenizer.countMessages(msgs);

  it('changes nothing below the limit', () => {
    const out = compressMessages(msgs, { model: 'gpt-4o' });
    expect(out.messageOrigin).toEqual(msgs.map((_, i) => i));
    expect(out.result.transforms_applied.some((t) => t.startsWith('context:'))).toBe(false);
  });

  it('over the limit: compresses harder, then fits, every marker redeemable', () => {
    const limit = Math.floor(full * 0.5);
    const out = compressMessages(msgs, { model: 'gpt-4o', contextLimit: limit, outputReserve: 0 });
    expect(out.result.tokens_after).toBeLessThanOrEqual(limit);
    expect(out.result.transforms_applied.some((t) => t.startsWith('context:compress_harder:'))).toBe(true);
    for (const m of out.result.messages) {
      const text = typeof m.content === 'string' ? m.content : JSON.stringify(m.content);
      for (const marker of parseMarkers(text)) expect(out.ccrEntries.has(marker.hash)).toBe(true);
    }
    expect(out.result.ccr_hashes).toEqual([...out.ccrEntries.keys()]);
    expect(toolPairsIntact(out.result.messages)).toBe(true);
    assertValidChat(out.result.messages);
    assertValidAnthropic(toAnthropic(out.result.messages));
    expect(out.changed.size).toBeGreaterThan(0);
    expect(out.observations?.some((o) => o.event === 'compressed')).toBe(true);
  });

  it('each flag changes what happens', () => {
    const limit = Math.floor(full * 0.15);
    const base = { model: 'gpt-4o', contextLimit: limit, outputReserve: 0 };
    const t = (o: object) => compressMessages(msgs, { ...base, ...o }).result.transforms_applied.join(' ');
    expect(t({})).toMatch(/context:compress_harder:\d+.*context:drop:intelligent:\d+/);
    expect(t({ compressFirst: false })).not.toMatch(/compress_harder/);
    expect(t({ intelligentScoring: false })).toMatch(/context:drop:position:/);
    expect(t({ intelligentContext: false })).toMatch(/context:drop:rolling_window:/);
  });

  it('drop markers redeem to the exact original input messages', () => {
    const out = compressMessages(msgs, {
      model: 'gpt-4o',
      contextLimit: Math.floor(full * 0.3),
      outputReserve: 0,
      compressFirst: false,
    });
    const k = out.messageOrigin.indexOf(-1);
    expect(k).toBeGreaterThan(0);
    const [info] = parseMarkers(String(out.result.messages[k]!.content));
    const next = out.messageOrigin.slice(k + 1).find((o) => o >= 0)!;
    const prev = out.messageOrigin[k - 1]!;
    expect(out.ccrEntries.get(info!.hash)).toBe(JSON.stringify(msgs.slice(prev + 1, next)));
  });
});
