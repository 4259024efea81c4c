import { afterEach, describe, expect, it } from 'vitest';
import type { Logger } from '../../src/log.js';
import { type MockUpstream, replyJson, startMockUpstream, until } from '../server/helpers.js';
import { CHAT_REPLY, MESSAGES_REPLY } from '../server/sse-mocks.js';
import { type GuardedSvc, recordingLogger, startGuardedSvc, type TestClock, testClock } from './helpers.js';

let svc: GuardedSvc | undefined;
let upstream: MockUpstream | undefined;
let clock: TestClock;
afterEach(async () => {
  await svc?.close();
  await upstream?.close();
  svc = upstream = undefined;
});

/** The mock reports this usage (input + output tokens) on every answer. */
const USAGE = { input: 100, output: 50 };

async function setup(flags: Record<string, unknown>, logger?: Logger) {
  clock = testClock(Date.parse('2025-05-01T12:00:00Z'));
  upstream = await startMockUpstream((req, res) => {
    if (req.url.startsWith('/v1/chat/completions')) {
      replyJson(res, 200, {
        ...CHAT_REPLY,
        usage: { prompt_tokens: USAGE.input, completion_tokens: USAGE.output, total_tokens: 150 },
      });
    } else {
      replyJson(res, 200, {
        ...MESSAGES_REPLY,
        usage: { input_tokens: USAGE.input, output_tokens: USAGE.output },
      });
    }
  });
  svc = await startGuardedSvc({
    flags: { 'messages-api-url': `${upstream.url}/v1`, 'compat-api-url': `${upstream.url}/v1`, ...flags },
    now: clock.now,
    ...(logger ? { logger } : {}),
  });
}

let n = 0;
/** A messages request; `words` sets its size; each is distinct (no cache hits). */
function ask(key: string, words = 5) {
  n += 1;
  return fetch(`${svc!.url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key, 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({
      model: 'claude-sonnet-4-5',
      max_tokens: 50,
      messages: [{ role: 'user', content: `question ${n}: ${'word '.repeat(words)}` }],
    }),
  });
}

function chat(key: string) {
  n += 1;
  return fetch(`${svc!.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: `q ${n}` }] }),
  });
}

const limitHeaders = (res: Response) => ({
  retryAfter: res.headers.get('retry-after'),
  limitRequests: res.headers.get('x-ratelimit-limit-requests'),
  remainingRequests: res.headers.get('x-ratelimit-remaining-requests'),
  limitTokens: res.headers.get('x-ratelimit-limit-tokens'),
  remainingTokens: Number(res.headers.get('x-ratelimit-remaining-tokens')),
});

describe('rate limits in the proxy', () => {
  it('trips the requests-per-minute limit with the headers and a provider-shaped 429, then refills', async () => {
    await setup({ 'rate-limit-rpm': 3 });
    for (let i = 0; i < 3; i++) expect((await ask('sk-a')).status).toBe(200);
    const refused = await ask('sk-a');
    expect(refused.status).toBe(429);
    expect(limitHeaders(refused)).toMatchObject({
      retryAfter: '20',
      limitRequests: '3',
      remainingRequests: '0',
      limitTokens: '2000000',
    });
    expect(limitHeaders(refused).remainingTokens).toBeGreaterThan(1_999_000);
    const body = (await refused.json()) as { type: string; error: { type: string; message: string } };
    expect(body).toEqual({
      type: 'error',
      error: {
        type: 'rate_limit_error',
        message: 'rate limit of 3 requests per minute for this API key reached; retry in 20 s',
      },
    });
    expect(upstream!.requests).toHaveLength(3);
    clock.advance(19_000);
    expect((await ask('sk-a')).status).toBe(429);
    clock.advance(1_000);
    expect((await ask('sk-a')).status).toBe(200);
    await until(() => svc!.events.length === 6);
    const stats = (await (await fetch(`${svc!.url}/stats`)).json()) as { requests: { rate_limited: number } };
    expect(stats.requests.rate_limited).toBe(2);
    expect(svc!.events.filter((e) => e.rateLimited).map((e) => [e.status, e.mode])).toEqual([
      [429, 'rejected'],
      [429, 'rejected'],
    ]);
  });

  it('trips the tokens-per-minute limit, settles with reported usage, and refills', async () => {
    await setup({ 'rate-limit-tpm': 1000 });
    const settled = async (count: number) => {
      await until(() => svc!.events.length === count);
      await new Promise((r) => setTimeout(r, 10));
    };
    // Each request counts ~600 tokens before compression; the upstream reports 150 used.
    // Without settlement the second would already be refused (1000 - 600 < 600).
    for (let i = 1; i <= 3; i++) {
      expect((await ask('sk-a', 600)).status).toBe(200);
      await settled(i);
    }
    const refused = await ask('sk-a', 600);
    expect(refused.status).toBe(429);
    const h = limitHeaders(refused);
    expect(h).toMatchObject({ limitTokens: '1000', limitRequests: '600', remainingRequests: '597' });
    expect(h.remainingTokens).toBe(1000 - 3 * 150);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain(
      '1000 tokens per minute',
    );
    const retry = Number(h.retryAfter);
    expect(retry).toBeGreaterThan(0);
    clock.advance((retry - 1) * 1000);
    expect((await ask('sk-a', 600)).status).toBe(429);
    clock.advance(1000);
    expect((await ask('sk-a', 600)).status).toBe(200);
  });

  it('keeps API keys apart', async () => {
    await setup({ 'rate-limit-rpm': 1 });
    expect((await ask('sk-a')).status).toBe(200);
    expect((await ask('sk-a')).status).toBe(429);
    expect((await ask('sk-b')).status).toBe(200);
    expect((await chat('sk-c')).status).toBe(200);
    expect((await chat('sk-c')).status).toBe(429);
  });

  it('answers 429 in the chat shape on /v1/chat/completions', async () => {
    await setup({ 'rate-limit-rpm': 1 });
    await chat('sk-c');
    const refused = await chat('sk-c');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('60');
    expect(await refused.json()).toEqual({
      error: {
        type: 'rate_limit_error',
        code: 'rate_limit_error',
        message: 'rate limit of 1 requests per minute for this API key reached; retry in 60 s',
      },
    });
  });

  it('never shows the key itself: buckets, events, /stats and /metrics see only its hash', async () => {
    const { lines, logger } = recordingLogger();
    await setup({ 'rate-limit-rpm': 1 }, logger);
    const key = 'sk-secret-guards-0123456789';
    await ask(key);
    await ask(key);
    await until(() => svc!.events.length === 2);
    const seen = [
      JSON.stringify(svc!.events),
      await (await fetch(`${svc!.url}/stats`)).text(),
      await (await fetch(`${svc!.url}/metrics`)).text(),
      lines.join('\n'),
      JSON.stringify(await svc!.server.ctx.guards!.rateLimiter!.peek(svc!.events[0]!.keyHash!)),
    ].join('\n');
    expect(seen).not.toContain(key);
    expect(svc!.events[1]).toMatchObject({ rateLimited: true, keyHash: svc!.events[0]!.keyHash });
    expect(svc!.events[0]!.keyHash).toMatch(/^[0-9a-f]{12}$/);
  });

  it('does not limit with --no-rate-limit', async () => {
    await setup({ 'rate-limit': false, 'rate-limit-rpm': 1, 'rate-limit-tpm': 1 });
    for (let i = 0; i < 4; i++) expect((await ask('sk-a', 50)).status).toBe(200);
  });
});
