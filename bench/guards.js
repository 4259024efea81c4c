// Guards bench: cost of the response-cache key and of the guard stage per request.
// Run alone: `npm run build && node bench/guards.js`. Loopback only.

import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { resolveConfig } from '../dist/src/config/index.js';
import { responseCacheKey } from '../dist/src/guards/cache-key.js';
import { createMemoryRateLimiter } from '../dist/src/guards/rate-limiter.js';
import { silentLogger } from '../dist/src/log.js';
import { createSvcServer } from '../dist/src/server/app.js';

const LINE = 'ERROR 2025-01-01T00:00:00Z service=api path=/v1/items id=12345 status=500 latency=123ms\n';
/** A chat body of about `tokens` tokens in 20 messages. */
function body(tokens, salt = '') {
  const per = Math.ceil(tokens / 30 / 20);
  const messages = Array.from({ length: 20 }, (_, i) => ({
    role: i % 2 ? 'assistant' : 'user',
    content: `${salt}${LINE.repeat(per)}${i}`,
  }));
  return { model: 'gpt-4o', max_tokens: 100, messages };
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}
function timeIt(n, f) {
  for (let i = 0; i < Math.min(20, n); i++) f(i); // warm-up
  const ms = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    f(i);
    ms.push(performance.now() - t);
  }
  return ms.sort((a, b) => a - b);
}

const rows = [];
for (const tokens of [1000, 100_000]) {
  const b = body(tokens);
  const ms = timeIt(tokens > 10_000 ? 200 : 2000, () =>
    responseCacheKey({ path: '/v1/chat/completions', body: b, keyHash: 'k', headers: {} }),
  );
  rows.push([`cache key, ${tokens} tokens`, percentile(ms, 50), percentile(ms, 99)]);
}
const limiter = createMemoryRateLimiter({ rpm: 1e9, tpm: 1e12 });
const t0 = performance.now();
const N = 200_000;
for (let i = 0; i < N; i++) await limiter.acquire(`key${i % 1000}`, 100);
rows.push(['rate limiter acquire', (performance.now() - t0) / N, undefined]);

// End to end through the real server: guards on (MISS and HIT) vs off.
const reply = JSON.stringify({
  id: 'x',
  object: 'chat.completion',
  model: 'gpt-4o',
  choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 },
});
const upstream = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(reply) });
    res.end(reply);
  });
});
await new Promise((r) => upstream.listen(0, '127.0.0.1', r));
const upstreamUrl = `http://127.0.0.1:${upstream.address().port}/v1`;

async function serve(flags) {
  const home = mkdtempSync(join(tmpdir(), 'svc-bench-'));
  const config = resolveConfig({
    flags: { port: 0, 'compat-api-url': upstreamUrl, optimize: false, ...flags },
    env: { SERVICE_HOME: home },
  });
  const server = await createSvcServer({ config, logger: silentLogger });
  const url = await server.listen();
  const pool = new Pool(url, { connections: 4 });
  return {
    pool,
    close: async () => {
      await pool.close();
      await server.close(500);
      rmSync(home, { recursive: true, force: true });
    },
  };
}
async function post(pool, text) {
  const t = performance.now();
  const res = await pool.request({
    method: 'POST',
    path: '/v1/chat/completions',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench' },
    body: text,
  });
  await res.body.dump();
  if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}`);
  return performance.now() - t;
}
async function run(pool, texts, warmUp) {
  for (const t of warmUp) await post(pool, t);
  const ms = [];
  for (const t of texts) ms.push(await post(pool, t));
  return ms.sort((a, b) => a - b);
}
for (const tokens of [1000, 100_000]) {
  const n = tokens > 10_000 ? 60 : 300;
  // Every text distinct (no cache hit, no memoized token count) except in the HIT run.
  const texts = (tag, count) =>
    Array.from({ length: count }, (_, i) => JSON.stringify(body(tokens, `${tag}${i} `)));
  const off = await serve({ cache: false, 'rate-limit': false });
  const offMs = await run(off.pool, texts('off', n), texts('offw', 10));
  await off.close();
  const on = await serve({ 'rate-limit-rpm': 1e6, 'rate-limit-tpm': 1e9 });
  const missMs = await run(on.pool, texts('miss', n), texts('missw', 10));
  const [hitText] = texts('hit', 1);
  const hitMs = await run(on.pool, Array(n).fill(hitText), [hitText]);
  await on.close();
  rows.push([`request ${tokens} tok, guards off`, percentile(offMs, 50), percentile(offMs, 99)]);
  rows.push([`request ${tokens} tok, guards on, MISS`, percentile(missMs, 50), percentile(missMs, 99)]);
  rows.push([`request ${tokens} tok, guards on, HIT`, percentile(hitMs, 50), percentile(hitMs, 99)]);
}
upstream.close();

const f = (x) => (x === undefined ? '' : x.toFixed(3));
console.log('guards bench (ms; passthrough mode, loopback mock upstream)');
console.log(`${'case'.padEnd(40)} ${'p50'.padStart(9)} ${'p99'.padStart(9)}`);
for (const [name, p50, p99] of rows)
  console.log(`${name.padEnd(40)} ${f(p50).padStart(9)} ${f(p99).padStart(9)}`);
