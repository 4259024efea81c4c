import { describe, expect, it } from 'vitest';
import {
  type CachedResponse,
  cacheableHeaders,
  cachedResponseSize,
  createMemoryResponseCache,
} from '../../src/guards/response-cache.js';

const entry = (body: string, status = 200): CachedResponse => ({
  mode: 'json',
  status,
  headers: { 'content-type': 'application/json' },
  body: Buffer.from(body),
  model: 'm',
  storedAt: 0,
});

describe('memory response cache', () => {
  it('returns what was stored and counts hits and misses', async () => {
    const cache = createMemoryResponseCache({ maxEntries: 10, ttlS: 60, maxBytes: 1 << 20 });
    expect(await cache.get('a')).toBeUndefined();
    expect(await cache.set('a', entry('{"x":1}'))).toBe(true);
    expect((await cache.get('a'))?.body.toString()).toBe('{"x":1}');
    expect(await cache.stats()).toMatchObject({ entries: 1, hits: 1, misses: 1 });
    expect(cache.peekStats()).toEqual(await cache.stats());
  });

  it('never stores a non-200 answer', async () => {
    const cache = createMemoryResponseCache({ maxEntries: 10, ttlS: 60, maxBytes: 1 << 20 });
    for (const status of [201, 400, 429, 500, 529])
      expect(await cache.set(`s${status}`, entry('{}', status))).toBe(false);
    expect((await cache.stats()).entries).toBe(0);
  });

  it('expires entries after the TTL on the injected clock', async () => {
    let t = 1_000_000;
    const cache = createMemoryResponseCache({ maxEntries: 10, ttlS: 60, maxBytes: 1 << 20, now: () => t });
    await cache.set('a', entry('{}'));
    t += 60_000;
    expect(await cache.get('a')).toBeDefined();
    t += 1;
    expect(await cache.get('a')).toBeUndefined();
    expect((await cache.stats()).entries).toBe(0);
  });

  it('evicts the least recently used entry past maxEntries', async () => {
    const cache = createMemoryResponseCache({ maxEntries: 2, ttlS: 60, maxBytes: 1 << 20 });
    await cache.set('a', entry('a'));
    await cache.set('b', entry('b'));
    await cache.get('a'); // a is now more recent than b
    await cache.set('c', entry('c'));
    expect(await cache.get('b')).toBeUndefined();
    expect(await cache.get('a')).toBeDefined();
    expect(await cache.get('c')).toBeDefined();
    expect(await cache.stats()).toMatchObject({ entries: 2, evictions: 1 });
  });

  it('bounds total bytes and refuses one answer larger than the bound', async () => {
    const one = cachedResponseSize(entry('x'.repeat(1000)));
    const cache = createMemoryResponseCache({ maxEntries: 100, ttlS: 60, maxBytes: one * 2 + 10 });
    await cache.set('a', entry('x'.repeat(1000)));
    await cache.set('b', entry('y'.repeat(1000)));
    await cache.set('c', entry('z'.repeat(1000)));
    const stats = await cache.stats();
    expect(stats.entries).toBe(2);
    expect(stats.bytes).toBeLessThanOrEqual(one * 2 + 10);
    expect(await cache.get('a')).toBeUndefined();
    expect(await cache.set('huge', entry('h'.repeat(one * 3)))).toBe(false);
    expect(await cache.get('c')).toBeDefined();
  });

  it('clear empties it', async () => {
    const cache = createMemoryResponseCache({ maxEntries: 10, ttlS: 60, maxBytes: 1 << 20 });
    await cache.set('a', entry('{}'));
    await cache.clear();
    expect((await cache.stats()).entries).toBe(0);
  });
});

describe('cacheableHeaders', () => {
  it('keeps content type and encoding only', () => {
    expect(
      cacheableHeaders({
        'Content-Type': 'application/json',
        'content-encoding': 'gzip',
        'request-id': 'req_1',
        date: 'x',
        'x-ratelimit-remaining-requests': '5',
        'set-cookie': ['a=b'],
      }),
    ).toEqual({ 'content-type': 'application/json', 'content-encoding': 'gzip' });
  });
});
