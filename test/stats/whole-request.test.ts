import type { Server } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tokenizerFor } from '../../src/engine/tokens.js';
import { getJson, startServer, type TestServer, tempHome } from './helpers.js';
import { startUsageMock, TOOLS, turnBodies, wholeTokens } from './three-turn-session.js';

// Issue 18, items 1 and 2: a three-turn session through the proxy, the mock upstream
// reporting cache reads and writes. /stats counts the whole requests (system, tools,
// messages) as sent and as forwarded, and prices each usage tier at its own rate.

let home: string;
let cleanup: () => Promise<void>;
let srv: TestServer | undefined;
let upstream: Server | undefined;
beforeEach(async () => {
  ({ home, cleanup } = await tempHome());
});
afterEach(async () => {
  await srv?.close();
  srv = undefined;
  await new Promise<void>((r) => (upstream ? upstream.close(() => r()) : r()));
  upstream = undefined;
  await cleanup();
});

describe('a three-turn session through the proxy', () => {
  it('counts whole requests as sent and as forwarded, and prices every cache tier (numbers written out)', async () => {
    const bodies: Buffer[] = [];
    const { base, server } = await startUsageMock(bodies);
    upstream = server;
    srv = await startServer(home, { flags: { 'messages-api-url': base, cache: false } });
    const sent = turnBodies();
    for (const text of sent) {
      const res = await fetch(`${srv.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
        body: text,
      });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    // biome-ignore lint/suspicious/noExplicitAny: reads response JSON by path
    let stats: Record<string, any> = {};
    for (let i = 0; i < 50; i++) {
      stats = (await getJson(`${srv.url}/stats`)).body;
      if (stats.requests.total >= 3) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(stats.requests.total).toBe(3);
    expect(bodies).toHaveLength(3);
    const forwarded = bodies.map((b) => b.toString('utf8'));

    const input = sent.map(wholeTokens);
    const out = forwarded.map(wholeTokens);
    // The tools alone are a large part of each request: they are counted.
    expect(input[0]!).toBeGreaterThan(tokenizerFor('claude-sonnet-4-5').countText(JSON.stringify(TOOLS)));
    // Something was compressed (turns 2 and 3 carry the large tool result).
    expect(out[1]!).toBeLessThan(input[1]!);
    expect(stats.tokens.input).toBe(input[0]! + input[1]! + input[2]!);
    expect(stats.tokens.sent).toBe(out[0]! + out[1]! + out[2]!);
    // svc's own svc_retrieve definition is forwarded too (from the first request): input - sent = saved - added.
    expect(stats.tokens.added).toBeGreaterThan(0);
    expect(stats.tokens.input - stats.tokens.sent).toBe(stats.tokens.saved - stats.tokens.added);
    expect(stats.tokens.savings_percent).toBe(
      Math.round((stats.tokens.saved / stats.tokens.input) * 10_000) / 100,
    );
    expect(stats.tokens.cache_read).toBe(0 + 5000 + 5800);
    expect(stats.tokens.cache_write).toBe(5000 + 800 + 400);
    expect(stats.tokens.output).toBe(100 + 80 + 50);

    // claude-sonnet-4-5: input $3, 5-minute write $3.75, 1-hour write $6, cache read $0.30, output $15 per million.
    // turn 1: 1200x3 + 5000x3.75 + 100x15             = 3600 + 18750 + 1500         = 23850
    // turn 2: 300x3 + 5000x0.30 + 800x6 (1h) + 80x15  = 900 + 1500 + 4800 + 1200    = 8400
    // turn 3: 200x3 + 5800x0.30 + 400x3.75 + 50x15    = 600 + 1740 + 1500 + 750     = 4590
    expect(stats.cost.total_cost_usd).toBeCloseTo((23850 + 8400 + 4590) / 1e6, 9);
    expect(stats.cost.estimated_requests).toBe(0);
    expect(stats.cost.unpriced_requests).toBe(0);

    // /health says the same.
    // biome-ignore lint/suspicious/noExplicitAny: reads response JSON by path
    const health = (await getJson(`${srv.url}/health`)).body as Record<string, any>;
    expect(health.stats).toEqual({
      total_requests: 3,
      tokens_saved: stats.tokens.saved,
      savings_percent: stats.tokens.savings_percent,
    });
  });
});
