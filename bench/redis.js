// Redis bench: latency a request gains when the state lives in Redis (`--store`) instead of in
// process, with every guard on (rate limit, cache, budget) and the stats counters.
// Run alone: `npm run build && node bench/redis.js [--n 300]`. Starts its own redis-server on a free
// loopback port (Debian package `redis-server`); loopback only.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { createMemoryCcrStore } from '../dist/src/ccr/memory-store.js';
import { createRedisCcrStore } from '../dist/src/ccr/redis-store.js';
import { resolveConfig } from '../dist/src/config/index.js';
import { silentLogger } from '../dist/src/log.js';
import { createSvcServer } from '../dist/src/server/app.js';
import { connectSharedStore } from '../dist/src/store/redis.js';
import { loadNote, printTable, requireBuild } from './lib/measure.js';

requireBuild();
const argN = process.argv.indexOf('--n');
const N = argN > 0 ? Number(process.argv[argN + 1]) : 300;

function freePort() {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}
async function startRedis() {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-redis-'));
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    {
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  );
  await new Promise((resolve, reject) => {
    child.once('error', reject);
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('Ready to accept connections')) resolve();
    });
  });
  return {
    url: `redis://127.0.0.1:${port}/0`,
    stop() {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

let redis;
try {
  redis = await startRedis();
} catch {
  console.log('redis bench: redis-server is not installed (apt-get install redis-server); skipped');
  process.exit(0);
}

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

const LINE = 'ERROR 2025-01-01T00:00:00Z service=api path=/v1/items id=12345 status=500 latency=123ms\n';
const body = (salt) =>
  JSON.stringify({
    model: 'gpt-4o',
    max_tokens: 100,
    messages: [{ role: 'user', content: `${salt} ${LINE.repeat(30)}` }],
  });

async function serve(store) {
  const home = mkdtempSync(join(tmpdir(), 'svc-bench-'));
  const config = resolveConfig({
    flags: {
      port: 0,
      'compat-api-url': upstreamUrl,
      optimize: false,
      'rate-limit-rpm': 1e7,
      'rate-limit-tpm': 1e12,
      budget: 1e6,
      ...(store ? { store, 'store-prefix': `bench${Date.now()}:` } : {}),
    },
    env: { SERVICE_HOME: home, SERVICE_TELEMETRY: 'off' },
  });
  const server = await createSvcServer({ config, logger: silentLogger });
  const url = await server.listen();
  const pool = new Pool(url, { connections: 8 });
  return {
    pool,
    async close() {
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
const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
async function sequential(pool, texts) {
  for (const t of texts.slice(0, 20)) await post(pool, `${t}w`); // warm-up
  const ms = [];
  for (const t of texts) ms.push(await post(pool, t));
  return ms.sort((a, b) => a - b);
}
async function throughput(pool, tag, count, concurrency = 8) {
  let next = 0;
  const t = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await post(pool, body(`${tag}${next++}`));
    }),
  );
  return count / ((performance.now() - t) / 1000);
}

const results = {};
for (const [name, store] of [
  ['in-process', undefined],
  ['redis', redis.url],
]) {
  const svc = await serve(store);
  const miss = await sequential(
    svc.pool,
    Array.from({ length: N }, (_, i) => body(`miss${i}`)),
  );
  const hitText = body('hit');
  await post(svc.pool, hitText);
  await new Promise((r) => setTimeout(r, 50));
  const hit = await sequential(svc.pool, Array(N).fill(hitText));
  const rps = await throughput(svc.pool, 'tp', N * 2);
  await svc.close();
  results[name] = { miss, hit, rps };
}

// The CCR store alone: put + get of a 4 KB original.
const shared = await connectSharedStore({ url: redis.url, prefix: 'benchccr:', logger: silentLogger });
const ccrRows = [];
for (const [name, ccr] of [
  ['in-process', createMemoryCcrStore()],
  ['redis', createRedisCcrStore(shared, { ttlSeconds: 60, localMaxSize: 0 })],
]) {
  const original = LINE.repeat(45);
  const ms = [];
  for (let i = 0; i < N * 2; i++) {
    const hash = i.toString(16).padStart(24, '0');
    const t = performance.now();
    await ccr.put(hash, original);
    await ccr.get(hash);
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  ccrRows.push([name, pct(ms, 50), pct(ms, 99)]);
}
await shared.close();
upstream.close();
redis.stop();

const f = (x) => x.toFixed(3);
const mem = results['in-process'];
const red = results.redis;
printTable(
  `redis bench: added latency per request, --store redis vs in-process (ms; guards on, passthrough, ${N} sequential requests, loopback; ${loadNote()})`,
  ['case', 'in-process p50', 'redis p50', 'added p50', 'in-process p99', 'redis p99', 'added p99'],
  [
    [
      'request, cache MISS (rate limit + cache get/set + budget reserve/settle + counters)',
      mem.miss,
      red.miss,
    ],
    ['request, cache HIT (rate limit + cache get)', mem.hit, red.hit],
  ].map(([label, a, b]) => [
    label,
    f(pct(a, 50)),
    f(pct(b, 50)),
    f(pct(b, 50) - pct(a, 50)),
    f(pct(a, 99)),
    f(pct(b, 99)),
    f(pct(b, 99) - pct(a, 99)),
  ]),
);
printTable(
  'redis bench: throughput with 8 concurrent connections (cache MISS)',
  ['store', 'requests/s'],
  [
    ['in-process', mem.rps.toFixed(0)],
    ['redis', red.rps.toFixed(0)],
  ],
);
printTable(
  'redis bench: CCR store put + get of a 4 KB original (ms)',
  ['store', 'p50', 'p99'],
  ccrRows.map(([n, a, b]) => [n, f(a), f(b)]),
);
