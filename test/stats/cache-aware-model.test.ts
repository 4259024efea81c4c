import { describe, expect, it } from 'vitest';
import {
  CACHE_TTL_MS,
  ConversationPrefixes,
  cachedRequestCost,
  MAX_SEGMENTS,
} from '../../src/stats/cache-aware.js';
import type { ModelPrice } from '../../src/stats/pricing.js';

// The parts of the cache-aware estimate (docs/stats.md), with literal numbers.

const SONNET: ModelPrice = {
  input: 3,
  output: 15,
  cacheRead: 0.3,
  cacheWrite: 3.75,
  cacheWrite1h: 6,
} as ModelPrice;
const shape = (hashes: number[], each = 100) => ({
  hashes,
  cumulative: hashes.map((_, i) => (i + 1) * each),
});

describe('conversation prefixes', () => {
  it('share the leading segments with the previous request, within the cache lifetime', () => {
    const c = new ConversationPrefixes();
    expect(c.advance('a', shape([1, 2, 3]), 0, CACHE_TTL_MS)).toBe(0);
    // same first two segments, a new third: 200 tokens shared
    expect(c.advance('a', shape([1, 2, 9, 4]), 1000, CACHE_TTL_MS)).toBe(200);
    // sent 6 minutes later: the 5-minute cache is gone
    expect(c.advance('a', shape([1, 2, 9, 4, 5]), 1000 + 6 * 60_000, CACHE_TTL_MS)).toBe(0);
    // another conversation shares nothing with it
    expect(c.advance('b', shape([1, 2, 9, 4, 5]), 2000, CACHE_TTL_MS)).toBe(0);
  });

  it('stay bounded: conversations, segments each, segments in all (least recently used dropped)', () => {
    const c = new ConversationPrefixes(3, 10);
    c.advance('a', shape([1, 2, 3, 4]), 0, CACHE_TTL_MS);
    c.advance('b', shape([1, 2, 3, 4]), 0, CACHE_TTL_MS);
    c.advance('c', shape([1, 2, 3, 4]), 0, CACHE_TTL_MS); // 12 segments > 10: 'a' goes
    expect(c.size).toBe(2);
    expect(c.segmentCount).toBe(8);
    expect(c.advance('a', shape([1, 2]), 1, CACHE_TTL_MS)).toBe(0);
    expect(c.advance('c', shape([1, 2]), 1, CACHE_TTL_MS)).toBe(200);
    const big = new ConversationPrefixes();
    big.advance('x', shape(Array.from({ length: MAX_SEGMENTS + 50 }, (_, i) => i)), 0, CACHE_TTL_MS);
    expect(big.segmentCount).toBe(MAX_SEGMENTS);
  });
});

describe('a request priced like the actual answer', () => {
  it('reads the prefix, bills the same uncached tail, writes the rest at the answer mix', () => {
    // 10,000 tokens, 6,000 cached, the answer billed 300 uncached and wrote 5-minute entries, 50 out:
    // 6000 x 0.30 + 300 x 3 + 3700 x 3.75 + 50 x 15 = 1800 + 900 + 13875 + 750 = 17325 millionths
    const shape5m = { input: 300, output: 50, cacheRead: 1, cacheWrite: 1, cacheWrite1h: 0 };
    expect(cachedRequestCost(SONNET, 10_000, 6_000, shape5m)).toBeCloseTo(0.017325, 12);
    // half of the answer's writes were 1-hour ones: the rest is written at (3.75 + 6) / 2
    const mixed = { input: 300, output: 50, cacheRead: 0, cacheWrite: 200, cacheWrite1h: 100 };
    expect(cachedRequestCost(SONNET, 10_000, 6_000, mixed)).toBeCloseTo(
      (1800 + 900 + 3700 * 4.875 + 750) / 1e6,
      12,
    );
    // an answer that used no cache: plain input
    const plain = { input: 10_000, output: 50, cacheRead: 0, cacheWrite: 0 };
    expect(cachedRequestCost(SONNET, 10_000, 6_000, plain)).toBeCloseTo((30_000 + 750) / 1e6, 12);
  });
});
