import type { Server } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getJson, startServer, type TestServer, tempHome } from './helpers.js';
import { startUsageMock, turnBodies, USAGE, wholeTokens } from './three-turn-session.js';

// Issue 18, items 3 and 8: the cache-aware saving of a three-turn session through the
// proxy (the mock upstream reports cache reads and writes), computed by hand from the
// bodies; and --observe, which forwards the same session untouched and projects what
// the normal run saved.

let home: string;
let cleanup: () => Promise<void>;
let servers: TestServer[] = [];
let upstreams: Server[] = [];
beforeEach(async () => {
  ({ home, cleanup } = await tempHome());
});
afterEach(async () => {
  for (const s of servers) await s.close();
  for (const u of upstreams) await new Promise<void>((r) => u.close(() => r()));
  servers = [];
  upstreams = [];
  await cleanup();
});

// biome-ignore lint/suspicious/noExplicitAny: reads response JSON by path
type Json = Record<string, any>;

async function runSession(flags: Record<string, unknown>, sessionHome: string) {
  const forwarded: Buffer[] = [];
  const { base, server } = await startUsageMock(forwarded);
  upstreams.push(server);
  const srv = await startServer(sessionHome, { flags: { 'messages-api-url': base, cache: false, ...flags } });
  servers.push(srv);
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
  let stats: Json = {};
  for (let i = 0; i < 100; i++) {
    stats = (await getJson(`${srv.url}/stats`)).body as Json;
    if (stats.requests.total >= 3) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  expect(stats.requests.total).toBe(3);
  const metrics = await (await fetch(`${srv.url}/metrics`)).text();
  return { sent, forwarded, stats, metrics };
}

const metric = (text: string, name: string) =>
  Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);

// claude-sonnet-4-5, USD per million tokens: input 3, output 15, cache read 0.30,
// 5-minute write 3.75, 1-hour write 6.
const BILLED = [
  1200 * 3 + 5000 * 3.75 + 100 * 15, // 23850
  300 * 3 + 5000 * 0.3 + 800 * 6 + 80 * 15, // 8400
  200 * 3 + 5800 * 0.3 + 400 * 3.75 + 50 * 15, // 4590
];

/**
 * The documented estimate (docs/stats.md) of turn `i` without svc, in millionths of USD:
 * svc's counts of the original body (`original`) and of its prefix shared with the
 * previous original body (`prefix`) are put in the upstream's units by
 * k = billed input / svc's count of the forwarded body; the prefix is read from the
 * cache, the actual uncached tail (`input_tokens`) is input, the rest is written at
 * the turn's own write mix; the output is the same.
 */
function estimate(i: number, original: number, prefix: number, forwarded: number): number {
  const u = USAGE[i]!;
  const k = (u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens) / forwarded;
  const tokens = Math.round(original * k);
  const read = Math.min(Math.round(prefix * k), tokens);
  const tail = Math.min(u.input_tokens, tokens - read);
  const written = tokens - read - tail;
  const writeRate = [3.75, 6, 3.75][i]!; // turn 2 wrote 1-hour entries only
  return read * 0.3 + tail * 3 + written * writeRate + u.output_tokens * 15;
}

describe('cache-aware savings of a three-turn session', () => {
  it('equal the estimate without svc from the original bodies less the billed cost (numbers written out)', async () => {
    const { sent, forwarded, stats, metrics } = await runSession({}, home);
    const input = sent.map(wholeTokens);
    // svc's counts of the three bodies as sent (Claude: the estimating tokenizer).
    expect(input).toEqual([1185, 5379, 5396]);
    const out = forwarded.map((b) => wholeTokens(b.toString('utf8')));
    expect(stats.tokens.input).toBe(input[0]! + input[1]! + input[2]!);
    expect(stats.tokens.sent).toBe(out[0]! + out[1]! + out[2]!);
    expect(out[1]!).toBeLessThan(input[1]!);
    expect(stats.cost.total_cost_usd).toBeCloseTo((23850 + 8400 + 4590) / 1e6, 9);

    // Each turn extends the previous one: the shared prefix is the whole previous original body.
    // With today's engine (forwarded 1337, 1726, 1743 tokens): turn 1 -$0.00264375, turn 2
    // +$0.0820884 (k = 6100/1726: 19010 tokens, 4188 read, 300 input, 14522 written at the
    // 1-hour rate, against $0.0084 billed), turn 3 +$0.0022713.
    const prefix = [0, input[0]!, input[1]!];
    const estimates = [0, 1, 2].map((i) => estimate(i, input[i]!, prefix[i]!, out[i]!));
    const savings = estimates.map((e, i) => (e - BILLED[i]!) / 1e6);
    const total = savings[0]! + savings[1]! + savings[2]!;
    expect(stats.cost.cache_aware_requests).toBe(3);
    expect(stats.cost.cache_aware_savings_usd).toBeCloseTo(total, 9);
    // Turn 1 had nothing to compress and svc added its svc_retrieve definition: a saving below 0, shown so.
    expect(out[0]!).toBeGreaterThan(input[0]!);
    expect(savings[0]!).toBeLessThan(0);
    // The token-priced figure stays beside it (saved x input price).
    expect(stats.cost.total_savings_usd).toBeCloseTo((stats.tokens.saved * 3) / 1e6, 9);
    expect(metric(metrics, 'service_cache_aware_savings_usd')).toBeCloseTo(total, 9);
    expect(metric(metrics, 'service_tokens_added_total')).toBe(stats.tokens.added);
    expect(stats.projected).toMatchObject({ requests: 0, tokens_saved: 0, savings_usd: 0 });
  });

  it('--observe: forwards the bytes the client sent, and projects what the normal run saved', async () => {
    const normalHome = `${home}/normal`;
    const observeHome = `${home}/observe`;
    const normal = await runSession({}, normalHome);
    const observed = await runSession({ observe: true }, observeHome);
    // byte for byte at the mock
    expect(observed.forwarded.map((b) => b.toString('utf8'))).toEqual(observed.sent);
    expect(Buffer.compare(observed.forwarded[2]!, Buffer.from(observed.sent[2]!, 'utf8'))).toBe(0);
    // nothing was really saved
    expect(observed.stats.tokens.saved).toBe(0);
    expect(observed.stats.tokens.sent).toBe(observed.stats.tokens.input);
    expect(observed.stats.cost.total_savings_usd).toBe(0);
    expect(observed.stats.cost.cache_aware_savings_usd).toBe(0);
    expect(observed.stats.cost.cache_aware_requests).toBe(3);
    expect(observed.stats.requests.by_mode.passthrough).toBe(3);
    // projected: what the normal run saved on the same requests
    const p = observed.stats.projected;
    expect(p.requests).toBe(3);
    expect(p.tokens_input).toBe(normal.stats.tokens.input);
    expect(p.tokens_saved).toBe(normal.stats.tokens.saved);
    expect(p.savings_percent).toBe(normal.stats.tokens.savings_percent);
    expect(metric(observed.metrics, 'service_projected_tokens_saved_total')).toBe(normal.stats.tokens.saved);
    // Projected USD: estimate of the original less estimate of what normal mode forwarded,
    // both priced like the (untouched) request's answer; k = billed input / svc's count of it.
    const input = observed.sent.map(wholeTokens);
    const compressed = normal.forwarded.map((b) => wholeTokens(b.toString('utf8')));
    const prefixIn = [0, input[0]!, input[1]!];
    const prefixOut = [0, compressed[0]!, compressed[1]!];
    const projected = [0, 1, 2].map(
      (i) =>
        estimate(i, input[i]!, prefixIn[i]!, input[i]!) -
        estimate(i, compressed[i]!, prefixOut[i]!, input[i]!),
    );
    const sum = (projected[0]! + projected[1]! + projected[2]!) / 1e6;
    expect(p.savings_usd).toBeCloseTo(sum, 9);
    expect(metric(observed.metrics, 'service_projected_savings_usd')).toBeCloseTo(sum, 9);
    expect(observed.stats.cost.total_cost_usd).toBeCloseTo((23850 + 8400 + 4590) / 1e6, 9);
  });
});
