import { describe, expect, it } from 'vitest';
import { TextLru, TextMap } from '../../src/engine/text-map.js';

// Maps keyed by texts that look a text up by its length and compare it, never
// having V8 hash it (issue 19): they must answer exactly as a Map would.

/** A copy of `s` as a new string object (what a new request's parse gives for the same text). */
function copyOf(s: string): string {
  return JSON.parse(JSON.stringify(s)) as string;
}

describe('TextMap', () => {
  it('answers as a Map: equal texts (other string objects too) hit, different texts of one length do not', () => {
    const m = new TextMap<number>();
    const a = `${'a'.repeat(300)}1`;
    const b = `${'a'.repeat(300)}2`;
    m.set(a, 1);
    expect(m.get(b)).toBeUndefined();
    m.set(b, 2);
    expect(m.get(copyOf(a))).toBe(1);
    expect(m.get(b)).toBe(2);
    expect(m.size).toBe(2);
    m.set(copyOf(a), 3);
    expect(m.get(a)).toBe(3);
    expect(m.size).toBe(2);
    expect(m.get('')).toBeUndefined();
    m.clear();
    expect(m.get(a)).toBeUndefined();
    expect(m.size).toBe(0);
  });
});

describe('TextLru', () => {
  it('keeps several texts of one length, the oldest leaving past four', () => {
    const lru = new TextLru<number>(1_000_000);
    const texts = Array.from({ length: 5 }, (_, i) => `${i}${'x'.repeat(400)}`);
    texts.forEach((t, i) => lru.set(t, i, 100));
    expect(lru.get(texts[0]!)).toBeUndefined();
    for (let i = 1; i < 5; i++) expect(lru.get(copyOf(texts[i]!))).toBe(i);
    expect(lru.has(texts[4]!)).toBe(true);
    expect(lru.calculatedSize).toBe(400);
  });

  it('stays within its bound, dropping the lengths used least recently', () => {
    const lru = new TextLru<number>(1_000);
    for (let n = 0; n < 50; n++) lru.set('y'.repeat(300 + n), n, 100);
    expect(lru.calculatedSize).toBeLessThanOrEqual(1_000);
    expect(lru.get('y'.repeat(349))).toBe(49);
    expect(lru.get('y'.repeat(300))).toBeUndefined();
  });

  it('setting a text again replaces its value without growing', () => {
    const lru = new TextLru<string>(10_000);
    const t = 'z'.repeat(500);
    lru.set(t, 'first', 600);
    lru.set(copyOf(t), 'second', 600);
    expect(lru.get(t)).toBe('second');
    expect(lru.calculatedSize).toBe(600);
  });
});
