import { describe, expect, it } from 'vitest';
import {
  createMemoryRateLimiter,
  type RateDecision,
  rateLimitHeaders,
} from '../../src/guards/rate-limiter.js';

function setup(rpm: number, tpm: number) {
  const clock = { t: 1_700_000_000_000 };
  const limiter = createMemoryRateLimiter({ rpm, tpm, now: () => clock.t });
  return { clock, limiter };
}

const allowed = (d: RateDecision) => {
  if (!d.allowed) throw new Error(`refused: ${d.limit}`);
  return d;
};

describe('memory rate limiter', () => {
  it('trips the requests-per-minute limit and refills over time', async () => {
    const { clock, limiter } = setup(3, 1_000_000);
    for (let i = 0; i < 3; i++) allowed(await limiter.acquire('k', 10));
    const refused = await limiter.acquire('k', 10);
    expect(refused).toMatchObject({ allowed: false, limit: 'requests', retryAfterS: 20 });
    expect(refused.snapshot).toEqual({
      limitRequests: 3,
      remainingRequests: 0,
      limitTokens: 1_000_000,
      remainingTokens: 999_970,
    });
    clock.t += 19_999;
    expect((await limiter.acquire('k', 10)).allowed).toBe(false);
    clock.t += 1; // one request refills every 20 s at 3 rpm
    expect(allowed(await limiter.acquire('k', 10)).snapshot.remainingRequests).toBe(0);
    clock.t += 60_000;
    expect((await limiter.peek('k')).remainingRequests).toBe(3);
  });

  it('trips the tokens-per-minute limit and refills over time', async () => {
    const { clock, limiter } = setup(100, 1000);
    allowed(await limiter.acquire('k', 700));
    const refused = await limiter.acquire('k', 400);
    expect(refused).toMatchObject({ allowed: false, limit: 'tokens', retryAfterS: 6 });
    expect(refused.snapshot).toMatchObject({ remainingTokens: 300, remainingRequests: 99 });
    clock.t += 6000; // 100 tokens refill in 6 s at 1000 tpm
    expect(allowed(await limiter.acquire('k', 400)).snapshot.remainingTokens).toBe(0);
  });

  it('settles the estimate with the reported usage', async () => {
    const { limiter } = setup(100, 1000);
    const d = allowed(await limiter.acquire('k', 800));
    await limiter.settle(d.ticket, 100);
    expect((await limiter.peek('k')).remainingTokens).toBe(900);
    const e = allowed(await limiter.acquire('k', 100));
    await limiter.settle(e.ticket, 900); // usage larger than estimated: a debt
    expect((await limiter.peek('k')).remainingTokens).toBe(0);
    expect((await limiter.acquire('k', 1)).allowed).toBe(false);
    const f = await limiter.peek('k');
    expect(f.remainingTokens).toBe(0);
  });

  it('settle(undefined) keeps the estimate, settle(0) refunds it', async () => {
    const { limiter } = setup(100, 1000);
    const a = allowed(await limiter.acquire('k', 300));
    await limiter.settle(a.ticket, undefined);
    expect((await limiter.peek('k')).remainingTokens).toBe(700);
    const b = allowed(await limiter.acquire('k', 300));
    await limiter.settle(b.ticket, 0);
    expect((await limiter.peek('k')).remainingTokens).toBe(700);
  });

  it('lets a request larger than the whole minute through once the bucket is full, then waits off the debt', async () => {
    const { clock, limiter } = setup(100, 1000);
    allowed(await limiter.acquire('k', 2500));
    const refused = await limiter.acquire('k', 10);
    expect(refused).toMatchObject({ allowed: false, limit: 'tokens' });
    if (refused.allowed) return;
    expect(refused.retryAfterS).toBe(91); // 1500 of debt + 10 tokens at 1000/min
    clock.t += 91_000;
    expect((await limiter.acquire('k', 10)).allowed).toBe(true);
  });

  it('keeps keys apart', async () => {
    const { limiter } = setup(1, 1000);
    allowed(await limiter.acquire('alice', 1));
    expect((await limiter.acquire('alice', 1)).allowed).toBe(false);
    expect((await limiter.acquire('bob', 1)).allowed).toBe(true);
  });
});

describe('rateLimitHeaders', () => {
  it('names the four limits and Retry-After', () => {
    expect(
      rateLimitHeaders({ limitRequests: 5, remainingRequests: 0, limitTokens: 100, remainingTokens: 40 }, 12),
    ).toEqual({
      'x-ratelimit-limit-requests': '5',
      'x-ratelimit-remaining-requests': '0',
      'x-ratelimit-limit-tokens': '100',
      'x-ratelimit-remaining-tokens': '40',
      'retry-after': '12',
    });
  });
});
