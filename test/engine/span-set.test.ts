import { describe, expect, it } from 'vitest';
import { collectIdentifiers, extractIdentifiers } from '../../src/engine/identifiers.js';
import { SpanSet } from '../../src/engine/span-set.js';
import { randomString, rng } from './helpers.js';

describe('SpanSet', () => {
  it('answers as a Set of the spans would, through growth and repeats', () => {
    const rand = rng(11);
    const set = new SpanSet();
    const reference = new Set<string>();
    // a small alphabet: many repeats, many spans of equal length and hash bucket
    for (let t = 0; t < 200; t++) {
      const text = randomString(rand, ['a', 'b', 'é', '\n', '1'], 40 + Math.floor(rand() * 200));
      const id = set.addText(text);
      for (let k = 0; k < 50; k++) {
        const start = Math.floor(rand() * text.length);
        const end = Math.min(text.length, start + Math.floor(rand() * 6));
        set.addSpan(id, start, end);
        reference.add(text.slice(start, end));
      }
    }
    expect(set.size).toBe(reference.size);
    expect(reference.size).toBeGreaterThan(1000);
    for (const value of reference) expect(set.has(value)).toBe(true);
    for (let k = 0; k < 5000; k++) {
      const probe = randomString(rand, ['a', 'b', 'é', '\n', '1', 'c'], Math.floor(rand() * 6));
      expect(set.has(probe)).toBe(reference.has(probe));
    }
  });

  it('holds the identifiers extractIdentifiers finds, and nothing else', () => {
    const text = 'see src/a.ts:12, pod web-7f9c; v1.2.3. and ./x_y_z# plain words 12345 ab/c';
    const set = new SpanSet();
    collectIdentifiers(text, set);
    const ids = new Set(extractIdentifiers(text));
    expect(set.size).toBe(ids.size);
    for (const id of ids) expect(set.has(id)).toBe(true);
    expect(set.has('src/a.ts')).toBe(false);
    expect(set.has('plain')).toBe(false);
  });
});
