import { describe, expect, it } from 'vitest';
import { EngineTimeoutError } from '../../src/engine/deadline.js';
import { compressMessages } from '../../src/engine/index.js';
import type { ChatMessage } from '../../src/engine/types.js';
import { isSvcError } from '../../src/errors.js';

/** A session whose tool outputs the router compresses. */
function session(): ChatMessage[] {
  const out: ChatMessage[] = [{ role: 'user', content: 'why does the build fail?' }];
  for (let i = 0; i < 4; i++) {
    const log = Array.from(
      { length: 200 },
      (_, k) => `2025-01-01T00:00:${k % 60}Z INFO job ${i}-${k} done`,
    ).join('\n');
    out.push(
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'bash', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: `c${i}`, content: log },
    );
  }
  out.push({ role: 'user', content: 'and now?' });
  return out;
}

/** A clock that advances `step` ms on every read. */
function steppingClock(step: number): { clock: () => number; reads: () => number } {
  let t = 0;
  let n = 0;
  return {
    clock: () => {
      n += 1;
      t += step;
      return t;
    },
    reads: () => n,
  };
}

describe('the engine time budget (issue 15)', () => {
  it('throws EngineTimeoutError (SVC_ENGINE_TIMEOUT) once the clock passes the deadline', () => {
    const { clock } = steppingClock(1000);
    let thrown: unknown;
    try {
      compressMessages(session(), { model: 'gpt-4o', deadline: 2500 }, { clock });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(EngineTimeoutError);
    expect(isSvcError(thrown) && thrown.code).toBe('SVC_ENGINE_TIMEOUT');
    expect((thrown as EngineTimeoutError).details).toEqual({ step: 'router' });
  });

  it('checks between the texts it compresses, not only between transforms', () => {
    const { clock, reads } = steppingClock(1);
    const out = compressMessages(session(), { model: 'gpt-4o', deadline: 1e9 }, { clock });
    expect(out.result.tokens_saved).toBeGreaterThan(0);
    // dedupe, router, one per compressed tool output (4), context, count
    expect(reads()).toBeGreaterThanOrEqual(8);
  });

  it('gives the same output with a far deadline as with none (the clock never shapes the result)', () => {
    const { clock } = steppingClock(1);
    const timed = compressMessages(session(), { model: 'gpt-4o', deadline: 1e9 }, { clock });
    const plain = compressMessages(session(), { model: 'gpt-4o' });
    expect(timed.result).toEqual(plain.result);
  });

  it('ignores a deadline without a clock (the engine reads no clock of its own)', () => {
    expect(() => compressMessages(session(), { model: 'gpt-4o', deadline: -1 })).not.toThrow();
  });
});
