import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { tokenizerFor } from '../../src/engine/tokens.js';
import { startTestRedis, type TestRedis } from '../helpers/redis-server.js';
import { longText, replyJson } from '../server/helpers.js';
import { CHAT_REPLY } from '../server/sse-mocks.js';
import { parsePrometheusText } from '../stats/prom-text.js';
import { eventually, type Fleet, type Replica, startFleet } from './fleet.js';

const run = promisify(execFile);

let redis: TestRedis;
let fleet: Fleet | undefined;
beforeAll(async () => {
  redis = await startTestRedis();
});
afterAll(async () => {
  await redis?.destroy();
});
afterEach(async () => {
  await fleet?.close();
  fleet = undefined;
});

// gpt-4o: $2.50 per million input tokens, $10 per million output tokens (data/pricing.json).
const MAX_TOKENS = 100;
const messagesFor = (i: number) => [
  { role: 'user', content: `request ${i}: ${'log line with details '.repeat(200)}` },
];
const inputTokens = (i: number) => tokenizerFor('gpt-4o').countMessages(messagesFor(i) as never);
const costOf = (i: number) => (inputTokens(i) * 2.5 + MAX_TOKENS * 10) / 1e6;

/** Upstream answering each chat request with usage equal to what svc counted, after `delayMs`. */
function usageReplies(delayMs = 0) {
  return async (req: { body: Buffer }, res: import('node:http').ServerResponse) => {
    const body = JSON.parse(req.body.toString()) as { messages: Array<{ content: string }> };
    const i = Number(/^request (\d+)/.exec(body.messages[0]?.content ?? '')?.[1] ?? 0);
    if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
    const prompt = Number.isFinite(i) ? inputTokens(i) : 10;
    replyJson(res, 200, {
      ...CHAT_REPLY,
      usage: { prompt_tokens: prompt, completion_tokens: MAX_TOKENS, total_tokens: prompt + MAX_TOKENS },
    });
  };
}

function chat(r: Replica, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${r.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test-1', ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
}
const priced = (i: number) => ({ model: 'gpt-4o', max_tokens: MAX_TOKENS, messages: messagesFor(i) });
/** A conversation the fake engine compresses: the long earlier message becomes a marker. */
const compressible = (label: string) => ({
  model: 'gpt-4o',
  max_tokens: MAX_TOKENS,
  messages: [
    { role: 'user', content: longText(label) },
    { role: 'assistant', content: 'ok' },
    { role: 'user', content: 'what failed?' },
  ],
});

async function json<T>(url: string): Promise<T> {
  const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
  expect(res.status).toBe(200);
  return (await res.json()) as T;
}

describe('two replicas on one Redis', () => {
  it('a marker written through one replica is redeemed through the other', async () => {
    fleet = await startFleet({ redisUrl: redis.url, handler: usageReplies() });
    const [a, b] = fleet.replicas as [Replica, Replica];
    const res = await chat(a, compressible('build'));
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    const forwarded = fleet.upstream.requests[0]!.body.toString();
    const hash = /hash=([0-9a-f]{24})/.exec(forwarded)?.[1];
    expect(hash).toBeDefined();
    const redeemed = await json<{ hash: string; content: string }>(`${b.url}/v1/retrieve/${hash}`);
    expect(redeemed.content).toBe(longText('build'));
    const query = await fetch(`${b.url}/v1/retrieve`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ hash, query: '"line 7:"' }),
    });
    expect(((await query.json()) as { content: string }).content).toContain('build line 7:');
    // The entry lives in Redis under the prefix, with the CCR TTL.
    expect(await b.server.ctx.store!.redis.ttl(`${fleet.prefix}ccr:${hash}`)).toBeGreaterThan(0);
    // TOIN is the fleet's too.
    expect((await json<{ path: string }>(`${b.url}/v1/toin`)).path).toContain(`${fleet.prefix}toin:`);
  });

  it('a cached answer stored by one replica is a HIT on the other', async () => {
    fleet = await startFleet({ redisUrl: redis.url, handler: usageReplies() });
    const [a, b] = fleet.replicas as [Replica, Replica];
    const first = await chat(a, priced(1));
    expect(first.headers.get('x-service-cache')).toBe('MISS');
    const answer = await first.text();
    await eventually(async () => (await a.server.ctx.guards!.cache!.stats()).entries === 1);
    const second = await chat(b, priced(1));
    expect(second.status).toBe(200);
    expect(second.headers.get('x-service-cache')).toBe('HIT');
    expect(await second.text()).toBe(answer);
    expect(fleet.upstream.requests).toHaveLength(1);
    // The cache's counters are the fleet's: both replicas report one entry and one hit.
    await eventually(async () => {
      const [sa, sb] = await Promise.all(
        [a, b].map((r) => json<{ cache: { entries: number; total_hits: number } }>(`${r.url}/stats`)),
      );
      return sa!.cache.total_hits === 1 && sb!.cache.total_hits === 1 && sa!.cache.entries === 1;
    });
  });

  it('shares the rate limit: a key gets rpm requests over the whole fleet', async () => {
    fleet = await startFleet({
      redisUrl: redis.url,
      handler: usageReplies(),
      flags: { 'rate-limit-rpm': 3, cache: false },
    });
    const [a, b] = fleet.replicas as [Replica, Replica];
    const statuses: number[] = [];
    for (const r of [a, b, a, b, a]) {
      const res = await chat(r, priced(statuses.length));
      statuses.push(res.status);
      await res.arrayBuffer();
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    // Another key has its own buckets.
    expect((await chat(b, priced(9), { authorization: 'Bearer sk-test-2' })).status).toBe(200);
    expect(fleet.upstream.requests).toHaveLength(4);
  });

  it('100 parallel requests over both replicas against a nearly spent budget overshoot by at most one request per replica', async () => {
    const limit = costOf(1) + costOf(2) + costOf(3) / 4;
    fleet = await startFleet({
      redisUrl: redis.url,
      handler: usageReplies(40),
      flags: { 'budget-hourly': limit, 'rate-limit': false, cache: false },
    });
    const [a, b] = fleet.replicas as [Replica, Replica];
    for (const [r, i] of [
      [a, 1],
      [b, 2],
    ] as const) {
      const res = await chat(r, priced(i));
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      await eventually(() => r.events.length === 1);
    }
    await eventually(
      async () => (await a.server.ctx.guards!.budget.status()).hourly.spend > 0.9 * (costOf(1) + costOf(2)),
    );
    const burst = await Promise.all(
      Array.from({ length: 100 }, (_, k) => chat(k % 2 ? b : a, priced(100 + k))),
    );
    const statuses = burst.map((r) => r.status);
    await Promise.all(burst.map((r) => r.arrayBuffer()));
    const admitted = statuses.filter((s) => s === 200).length;
    expect(admitted + statuses.filter((s) => s === 402).length).toBe(100);
    expect(admitted).toBeGreaterThanOrEqual(1);
    expect(admitted).toBeLessThanOrEqual(2); // at most one per replica (the shared reservation gives one)
    await eventually(() => a.events.length + b.events.length === 102);
    const maxOne = Math.max(...Array.from({ length: 100 }, (_, k) => costOf(100 + k)));
    await eventually(async () => (await b.server.ctx.guards!.budget.status()).hourly.reserved === 0);
    for (const r of [a, b]) {
      const block = (
        await json<{ budget: { hourly: { spend: number; reserved: number; exceeded: boolean } } }>(
          `${r.url}/stats`,
        )
      ).budget.hourly;
      expect(block.spend).toBeGreaterThan(limit);
      expect(block.spend - limit).toBeLessThanOrEqual(2 * maxOne);
      expect(block.exceeded).toBe(true);
    }
    expect(fleet.upstream.requests).toHaveLength(2 + admitted);
  });

  it('/stats, /stats-history, /metrics and svc history --store show the fleet totals on either replica', async () => {
    fleet = await startFleet({ redisUrl: redis.url, handler: usageReplies(), flags: { cache: false } });
    const [a, b] = fleet.replicas as [Replica, Replica];
    const plan: Array<[Replica, string]> = [
      [a, 'a1'],
      [a, 'a2'],
      [a, 'a3'],
      [b, 'b1'],
      [b, 'b2'],
    ];
    for (const [r, label] of plan) {
      const res = await chat(r, compressible(label));
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    await eventually(() => a.events.length === 3 && b.events.length === 2);
    const events = [...a.events, ...b.events];
    const saved = events.reduce((s, e) => s + e.tokensSaved, 0);
    const input = events.reduce((s, e) => s + e.tokensBefore, 0);
    expect(saved).toBeGreaterThan(0);

    type Stats = {
      requests: { total: number };
      tokens: { input: number; saved: number; output: number };
      persistent_savings: { lifetime: { tokens_saved: number; requests: number } };
      store: { backend: string; healthy: boolean; replica: { id: string; requests: { total: number } } };
    };
    let stats: Stats[] = [];
    await eventually(async () => {
      stats = await Promise.all([a, b].map((r) => json<Stats>(`${r.url}/stats`)));
      return stats.every(
        (s) => s.requests.total === 5 && s.persistent_savings.lifetime.tokens_saved === saved,
      );
    });
    for (const s of stats) {
      expect(s.tokens).toMatchObject({ input, saved, output: 5 * MAX_TOKENS });
      expect(s.persistent_savings.lifetime.requests).toBe(5);
      expect(s.store).toMatchObject({ backend: 'redis', healthy: true });
    }
    expect(stats.map((s) => s.store.replica.requests.total)).toEqual([3, 2]);
    expect(stats[0]!.store.replica.id).not.toBe(stats[1]!.store.replica.id);

    for (const r of [a, b]) {
      const history = await json<{
        lifetime: { tokens_saved: number };
        history: unknown[];
        series: { daily: unknown[] };
      }>(`${r.url}/stats-history`);
      expect(history.lifetime.tokens_saved).toBe(saved);
      expect(history.history.length).toBeGreaterThanOrEqual(1);
      const metrics = parsePrometheusText(await (await fetch(`${r.url}/metrics`)).text());
      const total = (name: string) => metrics.get(name)!.samples.reduce((s, x) => s + x.value, 0);
      expect(total('service_requests_total')).toBe(5);
      expect(total('service_tokens_saved_total')).toBe(saved);
      const count = metrics
        .get('service_latency_seconds')!
        .samples.find((x) => x.name === 'service_latency_seconds_count');
      expect(count?.value).toBe(5);
      // attribution (issue 18, item 7): the fleet's counters by project add up in /metrics
      const byProject = metrics
        .get('service_breakdown_requests_total')!
        .samples.filter((x) => x.labels.dimension === 'project');
      expect(Object.fromEntries(byProject.map((x) => [x.labels.value, x.value]))).toEqual({ default: 5 });
      // the shared store keeps no split: the savings show as unattributed, adding up to the totals
      const split = await json<{ values: Array<{ value: string; tokens_saved: number }> }>(
        `${r.url}/stats-history?by=project`,
      );
      expect(split.values).toEqual([expect.objectContaining({ value: 'unattributed', tokens_saved: saved })]);
    }

    const cli = await run(
      process.execPath,
      ['bin/run.js', 'history', '--store', redis.url, '--store-prefix', fleet.prefix, '--format', 'json'],
      { env: { ...process.env, SERVICE_HOME: '/nonexistent-svc-home' } },
    );
    expect((JSON.parse(cli.stdout) as { lifetime: { tokens_saved: number } }).lifetime.tokens_saved).toBe(
      saved,
    );
  });
});
