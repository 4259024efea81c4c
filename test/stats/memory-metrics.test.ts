import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringBytes } from '../../src/engine/memo-budget.js';
import { PROXY_KEEPS } from '../../src/json/prefix-parse.js';
import { startServer, type TestServer, tempHome } from './helpers.js';
import { parsePrometheusText } from './prom-text.js';

// service_memory_bytes{part} (issue 19): what the process holds, and each bounded store's
// estimate, which stays within --memo-max-bytes however many new conversations arrive.

const SAMPLE = JSON.parse(
  readFileSync(join(import.meta.dirname, '../../fixtures/samples/agent-session.json'), 'utf8'),
) as { model: string; messages: Array<{ role: string; content: string }> };

let upstream: Server | undefined;
const servers: TestServer[] = [];
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  for (const c of cleanups.splice(0)) await c();
  await new Promise<void>((r) => (upstream ? upstream.close(() => r()) : r()));
  upstream = undefined;
});

async function mockUpstream(): Promise<string> {
  upstream = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'chatcmpl-1',
          object: 'chat.completion',
          model: 'gpt-4o',
          choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 1000, completion_tokens: 2, total_tokens: 1002 },
        }),
      );
    });
  });
  await new Promise<void>((r) => upstream!.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(upstream!.address() as AddressInfo).port}/v1`;
}

async function memory(url: string): Promise<Record<string, number>> {
  const families = parsePrometheusText(await (await fetch(`${url}/metrics`)).text());
  const family = families.get('service_memory_bytes');
  expect(family?.type).toBe('gauge');
  return Object.fromEntries(family!.samples.map((s) => [s.labels.part!, s.value]));
}

/** The sample conversation as a new one: its first user message is made unique. */
function conversation(n: number): string {
  const messages = SAMPLE.messages.map((m, i) =>
    i === 1 ? { ...m, content: `[conversation ${n}] ${m.content}` } : m,
  );
  return JSON.stringify({ ...SAMPLE, messages });
}

/** POSTs a chat completions body and reads the answer, which must be a 200. */
async function send(url: string, body: string): Promise<void> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
    body,
  });
  expect(res.status).toBe(200);
  await res.arrayBuffer();
}

describe('service_memory_bytes in /metrics', () => {
  it('shows the process and every bounded store, each within its share of --memo-max-bytes', async () => {
    const api = await mockUpstream();
    const { home, cleanup } = await tempHome();
    cleanups.push(cleanup);
    const memoMax = 1024 * 1024;
    const srv = await startServer(home, {
      flags: {
        'compat-api-url': api,
        'memo-max-bytes': String(memoMax),
        'rate-limit': false,
        telemetry: false,
      },
    });
    servers.push(srv);

    const idle = await memory(srv.url);
    for (const part of ['rss', 'heap_used', 'heap_total', 'external']) expect(idle[part]).toBeGreaterThan(0);
    expect(idle.engine_memo).toBe(0);
    expect(idle.body_parses).toBe(0);
    expect(idle.history_scans).toBe(0);
    expect(idle.spelled_lengths).toBe(0);
    expect(idle.ccr).toBe(0);
    expect(idle.response_cache).toBe(0);

    for (let n = 0; n < 40; n++) await send(srv.url, conversation(n));
    const busy = await memory(srv.url);
    // the stores filled...
    expect(busy.engine_memo).toBeGreaterThan(0);
    expect(busy.body_parses).toBeGreaterThan(0);
    expect(busy.token_counts).toBeGreaterThan(0);
    expect(busy.ccr).toBeGreaterThan(0);
    expect(busy.response_cache).toBeGreaterThan(0);
    // ...and stayed within their shares: 40 conversations of ~46 KB would hold more than 1 MiB
    expect(40 * conversation(0).length).toBeGreaterThan(memoMax);
    expect(busy.content_hashes).toBeGreaterThan(0);
    expect(busy.history_scans).toBeGreaterThan(0);
    expect(busy.spelled_lengths).toBeGreaterThan(0);
    expect(busy.engine_memo).toBeLessThanOrEqual((memoMax * 2) / 16);
    expect(busy.body_parses).toBeLessThanOrEqual((memoMax * 7) / 16);
    expect(busy.token_counts).toBeLessThanOrEqual(memoMax / 16);
    expect(busy.content_hashes).toBeLessThanOrEqual(memoMax / 16);
    expect(busy.history_scans).toBeLessThanOrEqual((memoMax * 4) / 16);
    expect(busy.spelled_lengths).toBeLessThanOrEqual(memoMax / 16);
  });

  it('counts every request body kept of conversations that open alike', async () => {
    const api = await mockUpstream();
    const { home, cleanup } = await tempHome();
    cleanups.push(cleanup);
    const srv = await startServer(home, {
      flags: { 'compat-api-url': api, 'rate-limit': false, cache: false, telemetry: false },
    });
    servers.push(srv);
    // the same system message opens all four: the parser keeps them together, one group
    const counted: number[] = [];
    for (let n = 0; n < 4; n++) {
      await send(srv.url, conversation(n));
      counted.push((await memory(srv.url)).body_parses!);
    }
    // each body kept adds at least its text, its bytes twice (as received, as forwarded), its
    // messages' strings and what the proxy keeps with each message (a group grown in place counted
    // one body; the parser's own objects alone are a fourth of the proxy's)
    for (let n = 1; n < 4; n++) {
      const text = conversation(n);
      const kept =
        stringBytes(text) +
        2 * Buffer.byteLength(text) +
        text.length +
        SAMPLE.messages.length * PROXY_KEEPS.messageBytes;
      expect(counted[n]! - counted[n - 1]!).toBeGreaterThanOrEqual(kept);
    }
  });
});
