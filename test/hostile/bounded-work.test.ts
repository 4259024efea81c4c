import { describe, expect, it } from 'vitest';
import { COMPRESSORS } from '../../src/engine/compressors/index.js';
import { summarizeDropped } from '../../src/engine/context/drop-marker.js';
import { errorHits, salientTokens } from '../../src/engine/context/factors.js';
import { extractIdentifiers } from '../../src/engine/identifiers.js';
import { compressMessages } from '../../src/engine/index.js';
import { detectContentType } from '../../src/engine/router.js';
import type { ChatMessage } from '../../src/engine/types.js';
import { ctxOf } from '../engine/helpers.js';
import { pathologicalStrings } from './pathological.js';

/*
 * Issue 15, item 1: every engine step is linear (or bounded) in its input.
 * Each corpus string is 60k characters: a step quadratic in a run of them
 * takes seconds (salientTokens took 4 s on 60k letters before the fix), a
 * linear one milliseconds. The bound is generous for a loaded CI machine.
 */
const N = 60_000;
const BOUND_MS = 1500;

function timed(f: () => unknown): number {
  const start = performance.now();
  f();
  return performance.now() - start;
}

/** A conversation carrying `text` in a user turn, a tool call, its result and an answer. */
function conversationWith(text: string): ChatMessage[] {
  return [
    { role: 'system', content: 'You are a coding agent.' },
    { role: 'user', content: text },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'c1', type: 'function', function: { name: 'bash', arguments: JSON.stringify({ cmd: text }) } },
      ],
    },
    { role: 'tool', tool_call_id: 'c1', content: text },
    { role: 'assistant', content: text },
    { role: 'user', content: `and now ${text}` },
  ];
}

describe('bounded work on pathological strings (issue 15)', () => {
  for (const [name, text] of pathologicalStrings(N)) {
    it(`${name}: router, factors, identifiers and every compressor stay linear`, () => {
      const steps: Record<string, () => unknown> = {
        router: () => detectContentType(text),
        salientTokens: () => salientTokens(text),
        errorHits: () => errorHits(text),
        identifiers: () => extractIdentifiers(text),
        dropSummary: () =>
          summarizeDropped([
            {
              role: 'assistant',
              content: null,
              tool_calls: [{ id: 'c', type: 'function', function: { name: 'x', arguments: text } }],
            },
          ]),
        ...Object.fromEntries(Object.entries(COMPRESSORS).map(([type, c]) => [type, () => c(text, ctxOf())])),
      };
      const slow = Object.entries(steps)
        .map(([step, f]) => [step, timed(f)] as const)
        .filter(([, ms]) => ms > BOUND_MS);
      expect(slow).toEqual([]);
    });

    it(`${name}: the engine with the context manager (over the limit) answers without throwing`, () => {
      let out: ReturnType<typeof compressMessages> | undefined;
      const ms = timed(() => {
        out = compressMessages(conversationWith(text), {
          model: 'gpt-4o',
          contextLimit: 2000,
          outputReserve: 100,
        });
      });
      expect(ms).toBeLessThan(BOUND_MS * 2);
      expect(out?.result.tokens_after).toBeLessThanOrEqual(out?.result.tokens_before ?? 0);
    });
  }

  it('salientTokens on an 80k-letter run: regression for the quadratic path pattern', () => {
    const ms = timed(() => salientTokens(`see ${'a'.repeat(80_000)} and src/app/main.ts`));
    expect(ms).toBeLessThan(BOUND_MS);
    expect([...salientTokens(`see ${'a'.repeat(80_000)} and src/app/main.ts`)]).toEqual([
      'src/app/main.ts',
      'main.ts',
    ]);
  });

  it('deep JSON is compressed as text instead of overflowing the stack', () => {
    const deep = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
    expect(() => COMPRESSORS.json(deep, ctxOf())).not.toThrow();
    expect(() =>
      compressMessages(conversationWith(deep), { model: 'gpt-4o', contextLimit: 2000 }),
    ).not.toThrow();
  });
});
