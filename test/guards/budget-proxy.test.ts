import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tokenizerFor } from '../../src/engine/tokens.js';
import { type MockUpstream, replyJson, startMockUpstream, until } from '../server/helpers.js';
import { CHAT_REPLY } from '../server/sse-mocks.js';
import { type GuardedSvc, recordingLogger, startGuardedSvc, type TestClock, testClock } from './helpers.js';

let svc: GuardedSvc | undefined;
let upstream: MockUpstream | undefined;
afterEach(async () => {
  await svc?.close();
  await upstream?.close();
  svc = upstream = undefined;
});

// gpt-4o: $2.50 per million input tokens, $10 per million output tokens (data/pricing.json).
const MAX_TOKENS = 100;
const messagesFor = (i: number) => [
  { role: 'user', content: `request ${i}: ${'log line with details '.repeat(200)}` },
];
/** Tokens svc counts for request i: the mock reports exactly these, so each request costs what was reserved. */
const inputTokens = (i: number) => tokenizerFor('gpt-4o').countMessages(messagesFor(i) as never);
const costOf = (i: number) => (inputTokens(i) * 2.5 + MAX_TOKENS * 10) / 1e6;

async function setup(
  flags: Record<string, unknown>,
  options: {
    clock?: TestClock;
    home?: string;
    delayMs?: number;
    logger?: ReturnType<typeof recordingLogger>['logger'];
  } = {},
) {
  upstream = await startMockUpstream(async (req, res) => {
    const body = JSON.parse(req.body.toString()) as { messages: Array<{ content: string }> };
    const i = Number(/^request (\d+)/.exec(body.messages[0]!.content)?.[1]);
    if (options.delayMs) await new Promise((r) => setTimeout(r, options.delayMs));
    replyJson(res, 200, {
      ...CHAT_REPLY,
      usage: {
        prompt_tokens: inputTokens(i),
        completion_tokens: MAX_TOKENS,
        total_tokens: inputTokens(i) + MAX_TOKENS,
      },
    });
  });
  svc = await startGuardedSvc({
    flags: { 'compat-api-url': `${upstream.url}/v1`, 'messages-api-url': `${upstream.url}/v1`, ...flags },
    ...(options.clock ? { now: options.clock.now } : {}),
    ...(options.home ? { home: options.home } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
  });
}

function chat(i: number, headers: Record<string, string> = {}) {
  return fetch(`${svc!.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-1', ...headers },
    body: JSON.stringify({ model: 'gpt-4o', max_tokens: MAX_TOKENS, messages: messagesFor(i) }),
  });
}

function messages(i: number) {
  return fetch(`${svc!.url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'sk-1', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model: 'gpt-4o', max_tokens: MAX_TOKENS, messages: messagesFor(i) }),
  });
}

interface PeriodStatus {
  limit: number | null;
  spend: number;
  reserved: number;
  remaining: number | null;
  resets_at: string;
  exceeded: boolean;
}
async function budgetBlock() {
  const stats = (await (await fetch(`${svc!.url}/stats`)).json()) as {
    budget: { enabled: boolean; hourly: PeriodStatus; daily: PeriodStatus; monthly: PeriodStatus };
  };
  return stats.budget;
}

/** Sends request i and waits until its cost is settled. */
async function spend(i: number, expected = 200) {
  const before = svc!.events.length;
  const res = await chat(i);
  expect(res.status).toBe(expected);
  await res.arrayBuffer();
  await until(() => svc!.events.length === before + 1);
  await new Promise((r) => setTimeout(r, 10));
}

const T = Date.parse('2025-03-30T22:30:00.000Z');

describe('budgets in the proxy', () => {
  it('refuses with 402 budget_exceeded naming period, limit, spend and reset, in both shapes', async () => {
    const clock = testClock(T);
    const limit = costOf(1) + costOf(2) / 2;
    await setup({ budget: limit }, { clock });
    await spend(1);
    await spend(2); // starts under the limit, ends over it
    const spent = costOf(1) + costOf(2);
    const refused = await chat(3);
    expect(refused.status).toBe(402);
    expect(refused.headers.get('retry-after')).toBeNull();
    const body = (await refused.json()) as { error: Record<string, unknown> };
    expect(body.error).toMatchObject({
      type: 'budget_exceeded',
      code: 'budget_exceeded',
      period: 'daily',
      limit_usd: limit,
      resets_at: '2025-03-31T00:00:00.000Z',
    });
    expect(body.error.spend_usd as number).toBeCloseTo(spent, 9);
    expect(body.error.message).toMatch(
      /^daily budget of \$0\.00\d+ exceeded \(spent \$0\.00\d+\); resets at 2025-03-31T00:00:00\.000Z$/,
    );
    const asMessages = await messages(4);
    expect(asMessages.status).toBe(402);
    const mBody = (await asMessages.json()) as { type: string; error: Record<string, unknown> };
    expect(mBody.type).toBe('error');
    expect(mBody.error).toMatchObject({ type: 'budget_exceeded', period: 'daily', limit_usd: limit });
    expect(upstream!.requests).toHaveLength(2);
    await until(() => svc!.events.length === 4);
    expect(svc!.events.slice(2).map((e) => [e.status, e.mode, e.errorCode])).toEqual([
      [402, 'rejected', 'SVC_BUDGET_EXCEEDED'],
      [402, 'rejected', 'SVC_BUDGET_EXCEEDED'],
    ]);

    const block = await budgetBlock();
    expect(block.enabled).toBe(true);
    expect(block.daily).toMatchObject({
      limit,
      remaining: 0,
      reserved: 0,
      resets_at: '2025-03-31T00:00:00.000Z',
      exceeded: true,
    });
    expect(block.daily.spend).toBeCloseTo(spent, 9);
    expect(block.hourly).toMatchObject({
      limit: null,
      remaining: null,
      exceeded: false,
      resets_at: '2025-03-30T23:00:00.000Z',
    });
    expect(block.hourly.spend).toBeCloseTo(spent, 9);
    expect(block.monthly).toMatchObject({
      limit: null,
      exceeded: false,
      resets_at: '2025-04-01T00:00:00.000Z',
    });
  });

  it('50 parallel requests against a nearly spent budget overshoot by at most one request', async () => {
    const limit = costOf(1) + costOf(2) + costOf(3) / 4;
    await setup({ 'budget-hourly': limit, 'rate-limit': false }, { delayMs: 40 });
    await spend(1);
    await spend(2);
    const burst = await Promise.all(Array.from({ length: 50 }, (_, k) => chat(100 + k)));
    const statuses = burst.map((r) => r.status);
    await Promise.all(burst.map((r) => r.arrayBuffer()));
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 402)).toHaveLength(49);
    await until(() => svc!.events.length === 52);
    await new Promise((r) => setTimeout(r, 10));
    const block = await budgetBlock();
    const maxOne = Math.max(...Array.from({ length: 50 }, (_, k) => costOf(100 + k)));
    expect(block.hourly.spend).toBeGreaterThan(limit);
    expect(block.hourly.spend - limit).toBeLessThanOrEqual(maxOne);
    expect(block.hourly.reserved).toBe(0);
    expect(upstream!.requests).toHaveLength(3);
  });

  it.each([
    ['hourly', 'budget-hourly', '2025-03-30T23:00:00.000Z'],
    ['daily', 'budget', '2025-03-31T00:00:00.000Z'],
    ['monthly', 'budget-monthly', '2025-04-01T00:00:00.000Z'],
  ])('%s spend resets on its UTC boundary', async (period, flag, boundary) => {
    const clock = testClock(T);
    await setup({ [flag]: costOf(1) / 2 }, { clock });
    await spend(1);
    clock.t = Date.parse(boundary) - 1;
    const refused = await chat(2);
    expect(refused.status).toBe(402);
    expect(((await refused.json()) as { error: { period: string; resets_at: string } }).error).toMatchObject({
      period,
      resets_at: boundary,
    });
    clock.t = Date.parse(boundary);
    expect((await budgetBlock())[period as 'hourly']).toMatchObject({ spend: 0, exceeded: false });
    await spend(3);
  });

  it('serves cache hits free of charge even over budget', async () => {
    await setup({ budget: costOf(1) / 2 });
    await spend(1);
    const hit = await chat(1);
    expect(hit.status).toBe(200);
    expect(hit.headers.get('x-service-cache')).toBe('HIT');
    expect((await chat(2)).status).toBe(402);
    expect(upstream!.requests).toHaveLength(1);
  });

  it('logs the budget state at start-up and on crossing 80% and 100%', async () => {
    const { lines, logger } = recordingLogger();
    const clock = testClock(T);
    const per = costOf(1);
    await setup({ budget: per * 4.5 }, { clock, logger });
    expect(lines.filter((l) => l.startsWith('info budget:'))).toEqual([
      expect.stringMatching(
        /^info budget: daily \$0\.0\d+, spent \$0\.00 \(\$0\.0\d+ left\), resets 2025-03-31T00:00:00\.000Z$/,
      ),
    ]);
    for (let i = 1; i <= 3; i++) await spend(i); // 67%
    expect(lines.filter((l) => l.startsWith('warn budget'))).toEqual([]);
    await spend(4); // 89%
    await spend(5); // 111%
    expect(lines.filter((l) => l.startsWith('warn budget'))).toEqual([
      expect.stringContaining('warn budget: daily spend passed 80% of $0.0'),
      expect.stringContaining('warn budget: daily limit of $0.0'),
    ]);
  });

  it('keeps the spend across a restart', async () => {
    const home = mkdtempSync(join(tmpdir(), 'svc-budget-'));
    try {
      const clock = testClock(T);
      await setup({ budget: costOf(1) / 2 }, { clock, home });
      await spend(1);
      await svc!.close();
      await upstream!.close();
      await setup({ budget: costOf(1) / 2 }, { clock, home });
      expect((await budgetBlock()).daily.spend).toBeCloseTo(costOf(1), 9);
      expect((await chat(2)).status).toBe(402);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
