import { describe, expect, it } from 'vitest';
import { compressJson } from '../../src/engine/compressors/json.js';
import { collectEntities } from '../../src/engine/compressors/json-entities.js';
import { ctxOf } from './helpers.js';

/** The JSON document of a compressed output: the text before its index and marker lines. */
function body(text: string): unknown {
  return JSON.parse(text.split('\n[svc:')[0]!);
}

describe('JSON values that plain copies mishandle', () => {
  it('keeps a `__proto__` field of a kept item as a field', () => {
    const rows = Array.from({ length: 60 }, (_, i) => ({
      id: `row-${i}`,
      ['__proto__']: { owner: `team-${i % 3}` },
      note: 'x'.repeat(40),
      // not uniform records, so the plain (not columnar) form is written
      ...(i % 2 ? { extra: i } : {}),
    }));
    const text = JSON.stringify({ rows, total: 60 });
    expect(text).toContain('"__proto__"');
    const out = compressJson(text, ctxOf());
    expect(out?.lossy).toBe(true);
    const kept = (body(out!.text) as { rows: Array<Record<string, unknown>> }).rows;
    expect(kept.length).toBeLessThan(60);
    for (const row of kept) {
      expect(Object.hasOwn(row, '__proto__')).toBe(true);
      expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
    }
  });

  it('compresses an array whose items hold an object with a `toString` field', () => {
    // String() of such a value throws: the whole output used to go uncompressed
    const rows = Array.from({ length: 60 }, (_, i) => ({
      id: `row-${i}`,
      state: i % 20 === 0 ? 'failed' : 'ok',
      meta: i === 7 ? { toString: 1 } : 'plain',
      note: 'y'.repeat(40),
      ...(i % 2 ? { extra: i } : {}),
    }));
    const out = compressJson(JSON.stringify(rows), ctxOf());
    expect(out?.lossy).toBe(true);
    expect((body(out!.text) as unknown[]).length).toBeLessThan(60);
  });

  it('counts the unchanged fields of a known entity inside a known one once', () => {
    const inner = (rev: number) => ({
      id: 'inner-1',
      a: 1,
      b: 2,
      c: 3,
      d: 4,
      e: 5,
      rev,
    });
    // the outer entity is known but only three of its fields are unchanged (below the four that
    // shorten it); the inner one is known with five unchanged fields
    const outer = (rev: number, inner: unknown) => ({
      id: 'outer-1',
      x: 1,
      y: 2,
      z: 3,
      changed1: rev,
      changed2: rev,
      child: inner,
    });
    const earlier = new Map<string, Record<string, unknown>>();
    collectEntities(outer(1, inner(1)), earlier);
    const now = { outer: outer(2, inner(2)), pad: 'p'.repeat(1500) };
    const out = compressJson(JSON.stringify(now), ctxOf({ earlierEntities: () => earlier }));
    expect(out?.lossy).toBe(true);
    // five fields of the inner entity (a..e) are omitted, and the marker says five (it said ten:
    // the inner entity was walked, and counted, twice)
    expect(out!.text).toContain('[svc: 5 fields omitted (repeated or unchanged values shortened)');
    const shown = body(out!.text) as { outer: { child: Record<string, unknown> } };
    expect(Object.keys(shown.outer.child).sort()).toEqual(['id', 'rev', '…']);
  });
});
