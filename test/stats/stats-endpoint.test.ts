import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { publishFinished } from '../../src/server/finished-event.js';
import { recordSavings } from '../../src/stats/savings-file.js';
import { finishedEvent, getJson, startServer, type TestServer, tempHome } from './helpers.js';

let home: string;
let cleanup: () => Promise<void>;
let srv: TestServer | undefined;
beforeEach(async () => {
  ({ home, cleanup } = await tempHome());
});
afterEach(async () => {
  await srv?.close();
  srv = undefined;
  await cleanup();
});

// biome-ignore lint/suspicious/noExplicitAny: tests read response JSON by path
type Json = Record<string, any>;

/** Six requests covering every counter: see the expected numbers in the test. */
function emitMix(emit: (e: ReturnType<typeof finishedEvent>) => void) {
  const events = [
    // compressed, usage reported (incl. cache reads): cost (400*2.5 + 50*10 + 100*1.25)/1e6 = 0.001625; saved 600 -> $0.0015
    finishedEvent({ usage: { input: 400, output: 50, cacheRead: 100, cacheWrite: 0 } }),
    // answered from the response cache
    finishedEvent({
      mode: 'cached',
      cached: true,
      upstreamStatus: undefined,
      usage: undefined,
      tokensBefore: 500,
      tokensAfter: 500,
      tokensSaved: 0,
    }),
    // refused by the rate limiter
    finishedEvent({
      status: 429,
      upstreamStatus: undefined,
      usage: undefined,
      rateLimited: true,
      mode: 'rejected',
      tokensBefore: 0,
      tokensAfter: 0,
      tokensSaved: 0,
      errorCode: 'SVC_RATE_LIMITED',
    }),
    // upstream unreachable after compression: failed, saves nothing
    finishedEvent({
      status: 502,
      upstreamStatus: undefined,
      usage: undefined,
      tokensBefore: 800,
      tokensAfter: 700,
      tokensSaved: 100,
      errorCode: 'SVC_UPSTREAM_UNREACHABLE',
    }),
    // a model without a price: cost and savings unknown
    finishedEvent({
      model: 'mystery-model-1',
      tokensBefore: 1000,
      tokensAfter: 800,
      tokensSaved: 200,
      usage: { input: 800, output: 10, cacheRead: 0, cacheWrite: 0 },
    }),
    // POST /v1/compress: no upstream, saved 200 -> $0.0005; compression failed once elsewhere (fail-open)
    finishedEvent({
      path: '/v1/compress',
      format: 'compress',
      mode: 'compress',
      upstreamStatus: undefined,
      usage: undefined,
      tokensBefore: 300,
      tokensAfter: 100,
      tokensSaved: 200,
    }),
    finishedEvent({
      mode: 'optimize',
      compressionFailed: true,
      tokensBefore: 100,
      tokensAfter: 100,
      tokensSaved: 0,
      usage: { input: 100, output: 0, cacheRead: 0, cacheWrite: 40 },
    }),
  ];
  for (const e of events) emit(e);
  return events;
}

describe('GET /stats against the real server', () => {
  it('has every field of spec section 2 and issue 4 with the right numbers', async () => {
    const lines: string[] = [];
    srv = await startServer(home, { logger: createLogger({ level: 'info', write: (l) => lines.push(l) }) });
    const events = emitMix((e) => publishFinished(srv!.server.ctx, e));
    publishFinished(srv.server.ctx, finishedEvent({ model: 'mystery-model-1', tokensSaved: 0 }));

    const { status, body } = await getJson<Json>(`${srv.url}/stats`);
    expect(status).toBe(200);
    expect(Object.keys(body)).toEqual(
      expect.arrayContaining([
        'persistent_savings',
        'requests',
        'tokens',
        'cost',
        'cache',
        'savings_history',
        'budget',
      ]),
    );
    expect(body.requests).toMatchObject({
      total: 8,
      cached: 1,
      rate_limited: 1,
      failed: 1,
      compression_failed: 1,
    });
    expect(body.requests.by_mode).toMatchObject({ optimize: 5, cached: 1, rejected: 1, compress: 1 });
    const input = 1000 + 500 + 0 + 800 + 1000 + 300 + 100 + 1000;
    expect(body.tokens).toEqual({
      input,
      output: 50 + 10 + 0 + 50,
      saved: 600 + 200 + 200,
      savings_percent: Math.round((1000 / input) * 10_000) / 100,
      sent: 400 + 500 + 0 + 700 + 800 + 100 + 100 + 400,
      added: 0,
      cache_read: 100,
      cache_write: 40,
      retrieval: 0,
    });
    // 0.001625 + (100*2.5 + 40*2.5)/1e6 = 0.00035; both mystery-model requests are unknown, not added
    expect(body.cost.total_cost_usd).toBeCloseTo(0.001625 + 0.00035, 12);
    expect(body.cost.total_savings_usd).toBeCloseTo(0.0015 + 0.0005, 12);
    expect(body.cost.unpriced_requests).toBe(2);
    expect(body.cost.estimated_requests).toBe(0);
    expect(body.cost.pricing_as_of).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    // With the guards wired, the cache's own counters answer (these events were synthetic, not hits).
    expect(body.cache).toEqual({ enabled: true, entries: 0, total_hits: 0, misses: 0 });
    expect(body.budget).toMatchObject({ enabled: false, daily: { limit: null } });
    expect(body.persistent_savings.lifetime).toEqual({
      tokens_saved: 1000,
      compression_savings_usd: 0.002,
      requests: 3,
      unpriced_tokens_saved: 200,
      cli_tokens_saved: 0,
      cli_runs: 0,
      cache_aware_savings_usd: 0,
    });
    expect(body.persistent_savings.recent_history).toHaveLength(1);
    expect(body.persistent_savings.recent_history[0]).toMatchObject({
      total_tokens_saved: 1000,
      compression_savings_usd: 0.002,
    });
    expect(body.persistent_savings.recent_history[0].timestamp).toMatch(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/,
    );
    expect(body.savings_history).toHaveLength(1);
    expect(body.savings_history[0]).toMatchObject({
      total_tokens_saved: 1000,
      compression_savings_usd: 0.002,
    });
    expect(typeof body.uptime_s).toBe('number');

    // The subscriber puts its figures on the event for later observers.
    expect(events[0]!.costUsd).toBeCloseTo(0.001625, 12);
    expect(events[0]!.savingsUsd).toBeCloseTo(0.0015, 12);
    expect(events[4]!.costUsd).toBeUndefined();
    // One logged note per unknown model.
    expect(
      lines.filter((l) => l.includes('no price for this model') && l.includes('mystery-model-1')),
    ).toHaveLength(1);

    const health = await getJson<Json>(`${srv.url}/health`);
    expect(health.body.stats).toEqual({
      total_requests: body.requests.total,
      tokens_saved: body.tokens.saved,
      savings_percent: body.tokens.savings_percent,
    });
  });

  it('shows the cache and budget blocks their providers supply', async () => {
    srv = await startServer(home, { flags: { budget: '5' } });
    const { ctx } = srv.server;
    ctx.cacheStats = () => ({ entries: 7, hits: 3, misses: 4 });
    const budget = { enabled: true, periods: { daily: { limit_usd: 5, spent_usd: 1.25, exceeded: false } } };
    ctx.budgetStatus = () => budget;
    const { body } = await getJson<Json>(`${srv.url}/stats`);
    expect(body.cache).toEqual({ enabled: true, entries: 7, total_hits: 3, misses: 4 });
    expect(body.budget).toEqual(budget);
  });

  it('starts from zero with an empty file and reports the cache as disabled with --no-cache', async () => {
    srv = await startServer(home, { flags: { cache: false } });
    const { body } = await getJson<Json>(`${srv.url}/stats`);
    expect(body.requests).toMatchObject({ total: 0, cached: 0, rate_limited: 0, failed: 0 });
    expect(body.tokens).toMatchObject({ input: 0, output: 0, saved: 0, savings_percent: 0 });
    expect(body.cost).toMatchObject({ total_cost_usd: 0, total_savings_usd: 0 });
    expect(body.cache).toMatchObject({ enabled: false, entries: 0, total_hits: 0 });
    expect(body.persistent_savings).toMatchObject({
      lifetime: { tokens_saved: 0, compression_savings_usd: 0 },
      recent_history: [],
      file_state: 'missing',
    });
    expect(body.savings_history).toEqual([]);
    const health = await getJson<Json>(`${srv.url}/health`);
    expect(health.body.stats).toEqual({ total_requests: 0, tokens_saved: 0, savings_percent: 0 });
  });

  it("includes other writers' savings in persistent_savings as soon as they are written", async () => {
    srv = await startServer(home);
    const { ctx } = srv.server;
    publishFinished(ctx, finishedEvent({ tokensSaved: 100 }));
    await ctx.savings!.flush();
    const first = (await getJson<Json>(`${srv.url}/stats`)).body;
    expect(first.persistent_savings.lifetime.tokens_saved).toBe(100);
    for (const tokens of [40, 2]) {
      await recordSavings({ savingsPath: ctx.config.savingsPath, tokensSaved: tokens, model: 'gpt-4o' });
    }
    publishFinished(ctx, finishedEvent({ tokensSaved: 1 })); // still pending in the server
    const second = (await getJson<Json>(`${srv.url}/stats`)).body;
    expect(second.persistent_savings.lifetime).toMatchObject({ tokens_saved: 143, requests: 4 });
    expect(second.tokens.saved).toBe(101); // session counters are this server's only
  });
});
