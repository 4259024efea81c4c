import { afterEach, describe, expect, it } from 'vitest';
import { type GuardedSvc, startGuardedSvc, testClock } from './helpers.js';

let svc: GuardedSvc | undefined;
afterEach(async () => {
  await svc?.close();
  svc = undefined;
});

const MESSAGES = [{ role: 'user', content: 'hello there' }];

function compress(key: string, messages: unknown = MESSAGES) {
  return fetch(`${svc!.url}/v1/compress`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ messages, model: 'gpt-4o' }),
  });
}

describe('POST /v1/compress rate limit', () => {
  it('limits requests per minute per service key, with headers, and refills', async () => {
    const clock = testClock(Date.parse('2025-05-01T12:00:00Z'));
    svc = await startGuardedSvc({
      flags: { 'rate-limit-rpm': 2, 'api-key': ['svc-a', 'svc-b'] },
      now: clock.now,
    });
    expect((await compress('svc-a')).status).toBe(200);
    expect((await compress('svc-a')).status).toBe(200);
    const refused = await compress('svc-a');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('30');
    expect(refused.headers.get('x-ratelimit-limit-requests')).toBe('2');
    expect(refused.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    expect(refused.headers.get('x-ratelimit-limit-tokens')).toBe('2000000');
    expect(Number(refused.headers.get('x-ratelimit-remaining-tokens'))).toBeGreaterThan(1_999_000);
    const body = (await refused.json()) as { error: { type: string; message: string } };
    expect(body.error.type).toBe('rate_limit_error');
    expect(body.error.message).toContain('2 requests per minute');
    expect((await compress('svc-b')).status).toBe(200); // another key, its own buckets
    clock.advance(30_000);
    expect((await compress('svc-a')).status).toBe(200);
    expect(svc.events.filter((e) => e.rateLimited)).toHaveLength(1);
    const stats = (await (await fetch(`${svc.url}/stats`)).json()) as { requests: { rate_limited: number } };
    expect(stats.requests.rate_limited).toBe(1);
  });

  it('limits tokens per minute on the tokens it is sent', async () => {
    const clock = testClock(Date.parse('2025-05-01T12:00:00Z'));
    svc = await startGuardedSvc({ flags: { 'rate-limit-tpm': 100 }, now: clock.now });
    const big = [{ role: 'user', content: 'word '.repeat(60) }];
    expect((await compress('k', big)).status).toBe(200);
    const refused = await compress('k', big);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('x-ratelimit-limit-tokens')).toBe('100');
    expect(Number(refused.headers.get('x-ratelimit-remaining-tokens'))).toBeLessThan(50);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain(
      '100 tokens per minute',
    );
    clock.advance(60_000);
    expect((await compress('k', big)).status).toBe(200);
  });

  it('does not limit with --no-rate-limit', async () => {
    svc = await startGuardedSvc({ flags: { 'rate-limit': false, 'rate-limit-rpm': 1 } });
    for (let i = 0; i < 5; i++) expect((await compress('k')).status).toBe(200);
  });
});
