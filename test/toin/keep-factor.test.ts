import { describe, expect, it } from 'vitest';
import { messageShape } from '../../src/engine/context/shape.js';
import { compressMessages } from '../../src/engine/index.js';
import type { ChatMessage } from '../../src/engine/types.js';

/** A tool call and its large JSON output: a list the JSON compressor samples under its cap. */
function session(): ChatMessage[] {
  const rows = Array.from({ length: 300 }, (_, i) => ({
    id: i,
    name: `job_${i}`,
    status: i % 50 === 7 ? 'failed' : 'ok',
    duration_ms: (i * 37) % 1000,
  }));
  return [
    { role: 'user', content: 'Which jobs failed?' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'list_jobs', arguments: '{}' } }],
    },
    { role: 'tool', tool_call_id: 'c1', content: JSON.stringify(rows) },
    { role: 'user', content: 'Go on.' },
  ];
}

function compressedLength(keepFactor?: number): number {
  const messages = session();
  const shape = messageShape(messages, 2)!;
  const toin =
    keepFactor === undefined ? undefined : { shapes: { [shape.key]: { importance: 0.5, keepFactor } } };
  const out = compressMessages(messages, { model: 'gpt-4o', ...(toin ? { toin } : {}) });
  const text = out.result.messages[2]!.content as string;
  expect(text).toContain('svc_retrieve hash=');
  return text.length;
}

describe("TOIN's keep factor scales the compressors' keep budgets by tool-output shape", () => {
  it('keeps more of an often-retrieved shape and less of a never-retrieved one', () => {
    const neutral = compressedLength();
    expect(compressedLength(1)).toBe(neutral);
    expect(compressedLength(2)).toBeGreaterThan(neutral * 1.5);
    expect(compressedLength(0.66)).toBeLessThan(neutral * 0.85);
  });

  it('applies only to the shape it was learned for', () => {
    const messages = session();
    const toin = { shapes: { 'other_tool#00000000': { importance: 1, keepFactor: 2 } } };
    const a = compressMessages(messages, { model: 'gpt-4o', toin });
    const b = compressMessages(session(), { model: 'gpt-4o' });
    expect(a.result.messages).toEqual(b.result.messages);
  });
});

describe('what TOIN learns later never changes content already sent', () => {
  it('with the memo (the proxy), an earlier output keeps its first compression; a new one gets the new advice', async () => {
    const { createEngineMemo } = await import('../../src/compression.js');
    const memo = createEngineMemo();
    const first = session();
    const shapeKey = messageShape(first, 2)!.key;
    const turn1 = compressMessages(first, { model: 'gpt-4o', memo });
    // the next turn repeats the conversation and adds another output of the same shape
    const second: ChatMessage[] = [
      ...session().slice(0, 3),
      { role: 'assistant', content: 'More.' },
      { role: 'user', content: 'And the next page?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'c2', type: 'function', function: { name: 'list_jobs', arguments: '{"page":2}' } },
        ],
      },
      {
        role: 'tool',
        tool_call_id: 'c2',
        content: (session()[2]!.content as string).replaceAll('job_', 'task_'),
      },
      { role: 'user', content: 'Go on.' },
    ];
    const toin = { shapes: { [shapeKey]: { importance: 0.2, keepFactor: 0.66 } } };
    const turn2 = compressMessages(second, { model: 'gpt-4o', memo, toin });
    expect(turn2.result.messages[2]).toEqual(turn1.result.messages[2]);
    const neutral = compressMessages(second, { model: 'gpt-4o' }).result.messages[6]!.content as string;
    expect((turn2.result.messages[6]!.content as string).length).toBeLessThan(neutral.length);
  });
});
