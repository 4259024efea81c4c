import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Budget, createMemoryBudget } from '../../src/guards/budget.js';
import {
  createMemoryRateLimiter,
  type RateDecision,
  type RateLimiter,
} from '../../src/guards/rate-limiter.js';
import { createRedisBudget } from '../../src/guards/redis-budget.js';
import { createRedisResponseCache } from '../../src/guards/redis-cache.js';
import { createRedisRateLimiter } from '../../src/guards/redis-rate-limiter.js';
import {
  type CachedResponse,
  createMemoryResponseCache,
  type ResponseCache,
} from '../../src/guards/response-cache.js';
import { silentLogger } from '../../src/log.js';
import { connectSharedStore, type SharedStore } from '../../src/store/redis.js';
import { startTestRedis, type TestRedis } from '../helpers/redis-server.js';

/*
 * One contract for both implementations of each guard interface: the Redis
 * one must behave exactly like the in-memory one on the same clock.
 */

let redis: TestRedis;
let store: SharedStore;
beforeAll(async () => {
  redis = await startTestRedis();
  store = await connectSharedStore({ url: redis.url, prefix: 'contract:', logger: silentLogger });
});
afterAll(async () => {
  await store?.close();
  await redis?.destroy();
});

const T = Date.parse('2025-03-31T22:30:00.000Z');
function clock() {
  const c = { t: T, now: () => c.t };
  return c;
}
/** A store view with a prefix of its own, so each test starts empty. */
function fresh(): SharedStore {
  const prefix = `c${randomBytes(4).toString('hex')}:`;
  return Object.assign(Object.create(store) as SharedStore, {
    prefix,
    key: (...p: string[]) => prefix + p.join(':'),
  });
}

function entry(body: string, status = 200): CachedResponse {
  return {
    mode: 'json',
    status,
    headers: { 'content-type': 'application/json' },
    body: Buffer.from(body),
    model: 'gpt-4o',
    storedAt: T,
  };
}

type CacheFactory = (o: {
  maxEntries: number;
  ttlS: number;
  maxBytes: number;
  now: () => number;
}) => ResponseCache;
const caches: Array<[string, CacheFactory]> = [
  ['memory', (o) => createMemoryResponseCache(o)],
  ['redis', (o) => createRedisResponseCache(fresh(), { ...o, logger: silentLogger })],
];

describe.each(caches)('response cache contract (%s)', (_name, make) => {
  it('stores 200 answers, replays them byte for byte, refuses others and oversized ones', async () => {
    const c = clock();
    const cache = make({ maxEntries: 10, ttlS: 60, maxBytes: 2000, now: c.now });
    expect(await cache.get('k')).toBeUndefined();
    expect(await cache.set('k', entry('{"a":1}\n\u00e9'))).toBe(true);
    const hit = await cache.get('k');
    expect(hit).toEqual(entry('{"a":1}\n\u00e9'));
    expect(await cache.set('e', entry('x', 500))).toBe(false);
    expect(await cache.set('big', entry('x'.repeat(5000)))).toBe(false);
    expect(await cache.stats()).toMatchObject({ entries: 1, hits: 1, misses: 1, evictions: 0 });
  });

  it('expires entries after the TTL on the injected clock', async () => {
    const c = clock();
    const cache = make({ maxEntries: 10, ttlS: 60, maxBytes: 100_000, now: c.now });
    await cache.set('k', entry('v'));
    c.t += 59_000;
    expect(await cache.get('k')).toBeDefined();
    c.t += 2_000;
    expect(await cache.get('k')).toBeUndefined();
    expect((await cache.stats()).entries).toBe(0);
  });

  it('evicts the least recently used entry beyond the entry and byte bounds', async () => {
    const c = clock();
    const cache = make({ maxEntries: 2, ttlS: 600, maxBytes: 100_000, now: c.now });
    await cache.set('a', entry('A'));
    c.t += 1;
    await cache.set('b', entry('B'));
    c.t += 1;
    await cache.get('a');
    c.t += 1;
    await cache.set('c', entry('C'));
    expect(await cache.get('b')).toBeUndefined();
    expect((await cache.get('a'))?.body.toString()).toBe('A');
    expect((await cache.get('c'))?.body.toString()).toBe('C');
    expect(await cache.stats()).toMatchObject({ entries: 2, evictions: 1 });

    const small = make({ maxEntries: 100, ttlS: 600, maxBytes: 2 * (256 + 100 + 30 + 6), now: c.now });
    await small.set('x', entry('x'.repeat(100)));
    c.t += 1;
    await small.set('y', entry('y'.repeat(100)));
    c.t += 1;
    await small.set('z', entry('z'.repeat(100)));
    expect(await small.get('x')).toBeUndefined();
    expect(await small.get('z')).toBeDefined();
    const s = await small.stats();
    expect(s.entries).toBe(2);
    expect(s.bytes).toBeLessThanOrEqual(2 * (256 + 100 + 30 + 6));
  });
});

type LimiterFactory = (o: { rpm: number; tpm: number; now: () => number }) => RateLimiter;
const limiters: Array<[string, LimiterFactory]> = [
  ['memory', (o) => createMemoryRateLimiter(o)],
  ['redis', (o) => createRedisRateLimiter(fresh(), { ...o, logger: silentLogger })],
];
const strip = (d: RateDecision) => (d.allowed ? { allowed: true, snapshot: d.snapshot } : d);

describe('rate limiter contract', () => {
  it('gives the same decisions, Retry-After and remaining counts in memory and in Redis', async () => {
    const runs: unknown[][] = [];
    for (const [, make] of limiters) {
      const c = clock();
      const limiter = make({ rpm: 3, tpm: 1000, now: c.now });
      const out: unknown[] = [];
      for (let i = 0; i < 4; i++) out.push(strip(await limiter.acquire('k', 100)));
      c.t += 20_000;
      out.push(strip(await limiter.acquire('k', 100)));
      const big = await limiter.acquire('t', 900);
      out.push(strip(big));
      out.push(strip(await limiter.acquire('t', 200)));
      if (big.allowed) await limiter.settle(big.ticket, 300);
      out.push(strip(await limiter.acquire('t', 200)));
      out.push(await limiter.peek('t'), await limiter.peek('unknown'));
      c.t += 7_000;
      out.push(await limiter.peek('k'));
      runs.push(out);
    }
    expect(runs[1]).toEqual(runs[0]);
    expect(runs[0]![3]).toMatchObject({ allowed: false, limit: 'requests', retryAfterS: 20 });
    expect(runs[0]![6]).toMatchObject({ allowed: false, limit: 'tokens' });
    expect(runs[0]![7]).toMatchObject({ allowed: true });
  });
});

type BudgetFactory = (o: { limits: { daily?: number; hourly?: number }; now: () => number }) => Budget;
const budgets: Array<[string, BudgetFactory]> = [
  ['memory', (o) => createMemoryBudget(o)],
  ['redis', (o) => createRedisBudget(fresh(), { ...o, logger: silentLogger, refreshMs: 0 })],
];

describe.each(budgets)('budget contract (%s)', (_name, make) => {
  it('refuses once spend reaches the limit, counting reservations in flight', async () => {
    const c = clock();
    const budget = make({ limits: { daily: 1 }, now: c.now });
    const a = await budget.reserve(0.6);
    const b = await budget.reserve(0.6);
    expect([a.allowed, b.allowed]).toEqual([true, true]);
    expect(await budget.reserve(0.01)).toEqual({
      allowed: false,
      period: 'daily',
      limitUsd: 1,
      spendUsd: 1.2,
      resetsAt: '2025-04-01T00:00:00.000Z',
    });
    if (a.allowed) await budget.settle(a.reservation, 0.5);
    if (b.allowed) await budget.settle(b.reservation, 0);
    const status = await budget.status();
    expect(status.daily).toMatchObject({
      limit: 1,
      spend: 0.5,
      reserved: 0,
      remaining: 0.5,
      exceeded: false,
    });
    expect(status.hourly).toMatchObject({ limit: null, spend: 0.5, remaining: null });
    expect(budget.peekStatus()).toEqual(status);
  });

  it('resets each period on its UTC boundary', async () => {
    const c = clock();
    const budget = make({ limits: { hourly: 1 }, now: c.now });
    const a = await budget.reserve(1);
    if (a.allowed) await budget.settle(a.reservation, 1);
    expect((await budget.reserve(0.1)).allowed).toBe(false);
    c.t = Date.parse('2025-03-31T23:00:00.000Z');
    expect((await budget.status()).hourly).toMatchObject({ spend: 0, exceeded: false });
    expect((await budget.status()).daily.spend).toBe(1);
    expect((await budget.reserve(0.1)).allowed).toBe(true);
  });
});

describe('redis budget holds', () => {
  it('settles the reservation of a replica that died before settling at its estimate, once it expires', async () => {
    const c = clock();
    const s = fresh();
    const dead = createRedisBudget(s, {
      limits: { daily: 1 },
      now: c.now,
      logger: silentLogger,
      refreshMs: 0,
      holdTtlMs: 60_000,
    });
    expect((await dead.reserve(0.9)).allowed).toBe(true);
    await dead.close();
    const alive = createRedisBudget(s, {
      limits: { daily: 1 },
      now: c.now,
      logger: silentLogger,
      refreshMs: 0,
    });
    expect((await alive.status()).daily.reserved).toBe(0.9);
    expect((await alive.reserve(0.2)).allowed).toBe(true);
    expect((await alive.reserve(0.2)).allowed).toBe(false);
    c.t += 61_000;
    // the dead replica's request was forwarded: its hold becomes spend, not free budget again
    const status = await alive.status();
    expect(status.daily.reserved).toBeCloseTo(0.2, 9);
    expect(status.daily.spend).toBeCloseTo(0.9, 9);
    expect((await alive.reserve(0.2)).allowed).toBe(false);
    await alive.close();
  });
});
