import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { publishFinished } from '../../src/server/finished-event.js';
import { finishedEvent, startServer, type TestServer, tempHome } from './helpers.js';
import { type PromFamily, parsePrometheusText } from './prom-text.js';

let home: string;
let cleanup: () => Promise<void>;
const servers: TestServer[] = [];
beforeEach(async () => {
  ({ home, cleanup } = await tempHome());
});
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  await cleanup();
});

const value = (f: PromFamily | undefined, name: string, labels: Record<string, string> = {}) =>
  f?.samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    ?.value;

async function metricsOf(url: string) {
  const res = await fetch(`${url}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  return { text, families: parsePrometheusText(text) };
}

describe('GET /metrics', () => {
  it('parses as Prometheus text and has the names, types, buckets and values of spec section 4', async () => {
    const srv = await startServer(home);
    servers.push(srv);
    const { ctx } = srv.server;
    ctx.cacheStats = () => ({ entries: 2, hits: 5, misses: 9 });
    const emit = (e: ReturnType<typeof finishedEvent>) => publishFinished(ctx, e);
    emit(finishedEvent({ tokensBefore: 1000, tokensAfter: 600, tokensSaved: 400, latencyMs: 8 })); // ratio 0.6
    emit(finishedEvent({ tokensBefore: 1000, tokensAfter: 850, tokensSaved: 150, latencyMs: 50 })); // ratio 0.85
    emit(
      finishedEvent({
        mode: 'passthrough',
        tokensBefore: 0,
        tokensAfter: 0,
        tokensSaved: 0,
        latencyMs: 2000,
        model: 'weird/"model"\nxyz',
      }),
    );
    emit(
      finishedEvent({
        mode: 'cached',
        cached: true,
        upstreamStatus: undefined,
        usage: undefined,
        tokensSaved: 0,
        latencyMs: 1,
      }),
    );

    const { text, families } = await metricsOf(srv.url);
    const expectedTypes: Record<string, string> = {
      service_requests_total: 'counter',
      service_tokens_saved_total: 'counter',
      service_cost_usd_total: 'counter',
      service_latency_ms_sum: 'counter',
      service_compression_ratio: 'histogram',
      service_latency_seconds: 'histogram',
      service_cache_hits_total: 'counter',
      service_cache_misses_total: 'counter',
    };
    for (const [name, type] of Object.entries(expectedTypes)) {
      expect(families.get(name)?.type, name).toBe(type);
      expect(families.get(name)?.help, name).toBeTruthy();
    }
    const get = (n: string) => families.get(n);
    expect(value(get('service_requests_total'), 'service_requests_total', { mode: 'optimize' })).toBe(2);
    expect(value(get('service_requests_total'), 'service_requests_total', { mode: 'passthrough' })).toBe(1);
    expect(value(get('service_requests_total'), 'service_requests_total', { mode: 'cached' })).toBe(1);
    expect(value(get('service_tokens_saved_total'), 'service_tokens_saved_total')).toBe(550);
    expect(value(get('service_latency_ms_sum'), 'service_latency_ms_sum')).toBe(8 + 50 + 2000 + 1);
    expect(value(get('service_cache_hits_total'), 'service_cache_hits_total')).toBe(5);
    expect(value(get('service_cache_misses_total'), 'service_cache_misses_total')).toBe(9);
    const cost = value(get('service_cost_usd_total'), 'service_cost_usd_total')!;
    expect(cost).toBeGreaterThan(0);
    const stats = (await (await fetch(`${srv.url}/stats`)).json()) as { cost: { total_cost_usd: number } };
    expect(cost).toBeCloseTo(stats.cost.total_cost_usd, 10);

    const ratio = get('service_compression_ratio')!;
    const bucket = (f: PromFamily, le: string) => value(f, `${f.name}_bucket`, { le });
    expect(bucket(ratio, '0.5')).toBe(0);
    expect(bucket(ratio, '0.7')).toBe(1);
    expect(bucket(ratio, '0.9')).toBe(2);
    expect(value(ratio, 'service_compression_ratio_count')).toBe(2); // passthrough and cache hits are not compressions
    const latency = get('service_latency_seconds')!;
    expect(bucket(latency, '0.01')).toBe(2); // 1 ms and 8 ms
    expect(bucket(latency, '0.1')).toBe(3);
    expect(bucket(latency, '+Inf')).toBe(4);
    expect(value(latency, 'service_latency_seconds_sum')).toBeCloseTo(2.059, 9);

    // Labels stay bounded: a raw model string never becomes a label value.
    expect(text).not.toContain('weird');
    const byModel = get('service_model_requests_total')!;
    expect(new Set(byModel.samples.map((s) => s.labels.model))).toEqual(new Set(['gpt-4o', 'other']));
    const modes = new Set(get('service_requests_total')!.samples.map((s) => s.labels.mode));
    for (const mode of modes)
      expect(['optimize', 'passthrough', 'cached', 'bypass', 'compress', 'rejected']).toContain(mode);
  });

  it('keeps one registry per server instance', async () => {
    const a = await startServer(home);
    const b = await startServer(home, { env: { SERVICE_SAVINGS_PATH: `${home}/b.json` } });
    servers.push(a, b);
    publishFinished(a.server.ctx, finishedEvent({ tokensSaved: 123 }));
    const fa = (await metricsOf(a.url)).families;
    const fb = (await metricsOf(b.url)).families;
    expect(value(fa.get('service_tokens_saved_total'), 'service_tokens_saved_total')).toBe(123);
    expect(value(fb.get('service_tokens_saved_total'), 'service_tokens_saved_total')).toBe(0);
    expect(value(fb.get('service_cache_hits_total'), 'service_cache_hits_total')).toBe(0);
  });
});

describe('the strict exposition parser used above', () => {
  it.each([
    ['a sample before its TYPE is fine only as untyped', 'x 1\n', null],
    ['missing final newline', '# TYPE x counter\nx 1', /newline/],
    ['bad value', '# TYPE x counter\nx one\n', /bad value/],
    ['unquoted label', '# TYPE x counter\nx{a=b} 1\n', /not quoted/],
    ['bad escape', '# TYPE x counter\nx{a="\\q"} 1\n', /bad escape/],
    ['interleaved family', '# TYPE x counter\nx 1\n# TYPE y counter\ny 1\nx 2\n', /not grouped/],
    ['TYPE after samples', 'x 1\n# TYPE x counter\n', /after its samples|TYPE after samples/],
    [
      'non-cumulative histogram',
      '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n',
      /cumulative/,
    ],
    ['no +Inf bucket', '# TYPE h histogram\nh_bucket{le="1"} 1\nh_sum 1\nh_count 1\n', /\+Inf/],
    ['count mismatch', '# TYPE h histogram\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 1\n', /_count/],
  ])('%s', (_name, text, error) => {
    if (error === null) expect(() => parsePrometheusText(text)).not.toThrow();
    else expect(() => parsePrometheusText(text)).toThrow(error);
  });
});
