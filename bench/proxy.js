#!/usr/bin/env node
/**
 * Proxy bench (issue 3): added latency of `svc serve` versus calling the same
 * loopback mock upstream directly (p50/p99, 1k- and 100k-token requests),
 * requests per second through the proxy versus direct, idle RSS, and time to
 * ready of `svc serve`. Runs against dist/ (build first). Usage:
 *   node bench/proxy.js [--quick] [--json]
 * Mock upstream and proxy run in their own processes; this one only sends.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { cpuMs } from './lib/cpu.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = new Set(process.argv.slice(2));

if (args.has('--mock-upstream')) {
  const reply = JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    model: 'gpt-4o',
    choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 1000, completion_tokens: 1, total_tokens: 1001 },
  });
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(reply) });
      res.end(reply);
    });
  });
  server.keepAliveTimeout = 65_000;
  server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
} else {
  await main();
}

function rssMb(pid) {
  const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** A chat request whose tool output is JSON records, about `tokens` tokens in all. */
function chatRequest(tokens, turn) {
  const records = [];
  let size = 0;
  for (let i = 0; size < tokens * 3.2; i++) {
    const rec = {
      id: i,
      name: `item-${i}`,
      status: i % 17 === 0 ? 'error' : 'ok',
      latency_ms: (i * 37) % 500,
      tags: ['a', 'b'],
    };
    size += JSON.stringify(rec).length;
    records.push(rec);
  }
  return JSON.stringify({
    model: 'gpt-4o',
    messages: [
      { role: 'system', content: 'You are a coding agent.' },
      { role: 'user', content: 'List the items.' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'list', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: JSON.stringify(records) },
      { role: 'user', content: `Which items failed? (turn ${turn})` },
    ],
  });
}

async function spawnReady(cmd, argv, pattern, stream) {
  const t0 = performance.now();
  const child = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env } });
  let out = '';
  const match = await new Promise((resolve, reject) => {
    const onData = (d) => {
      out += d;
      const m = pattern.exec(out);
      if (m) resolve(m);
    };
    child[stream].on('data', onData);
    child.on('exit', (code) => reject(new Error(`${argv.join(' ')} exited ${code}: ${out}`)));
  });
  return { child, match, readyMs: performance.now() - t0 };
}

async function timeOne(pool, path, body) {
  const t0 = performance.now();
  const res = await pool.request({
    method: 'POST',
    path,
    body,
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench' },
  });
  await res.body.dump();
  if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}`);
  return performance.now() - t0;
}

async function latency(direct, proxy, tokens, n, pid) {
  const bodies = Array.from({ length: 8 }, (_, i) => chatRequest(tokens, i));
  for (let i = 0; i < Math.min(20, n); i++) {
    await timeOne(direct, '/v1/chat/completions', bodies[i % 8]);
    await timeOne(proxy, '/v1/chat/completions', bodies[i % 8]);
  }
  const d = [];
  const p = [];
  const cpu0 = cpuMs(pid);
  for (let i = 0; i < n; i++) {
    const body = bodies[i % 8];
    d.push(await timeOne(direct, '/v1/chat/completions', body));
    p.push(await timeOne(proxy, '/v1/chat/completions', body));
  }
  const cpuPerRequest = (cpuMs(pid) - cpu0) / n;
  d.sort((a, b) => a - b);
  p.sort((a, b) => a - b);
  return {
    bytes: Buffer.byteLength(bodies[0]),
    cpuPerRequest,
    direct: { p50: percentile(d, 50), p99: percentile(d, 99) },
    proxy: { p50: percentile(p, 50), p99: percentile(p, 99) },
    added: { p50: percentile(p, 50) - percentile(d, 50), p99: percentile(p, 99) - percentile(d, 99) },
  };
}

async function throughput(pool, body, seconds, concurrency) {
  let done = 0;
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        await timeOne(pool, '/v1/chat/completions', body);
        done++;
      }
    }),
  );
  return done / seconds;
}

async function main() {
  const quick = args.has('--quick');
  const mock = await spawnReady(
    process.execPath,
    [fileURLToPath(import.meta.url), '--mock-upstream'],
    /(\d+)\n/,
    'stdout',
  );
  const upstreamUrl = `http://127.0.0.1:${mock.match[1]}`;
  const readyRuns = [];
  let svc;
  for (let i = 0; i < 3; i++) {
    if (svc) {
      const exited = new Promise((r) => svc.child.once('exit', r));
      svc.child.kill();
      await exited;
    }
    svc = await spawnReady(
      process.execPath,
      [
        join(ROOT, 'bin/run.js'),
        'serve',
        '--port',
        '0',
        '--compat-api-url',
        `${upstreamUrl}/v1`,
        '--no-telemetry',
        // The proxy's own cost: the guards (cache, rate limits) are measured by bench/guards.js;
        // with them on, repeated bench bodies would be cache hits and the load would trip 600 rpm.
        '--no-cache',
        '--no-rate-limit',
        '--log-level',
        'info',
      ],
      /listening on (http:\/\/\S+)/,
      'stderr',
    );
    readyRuns.push(svc.readyMs);
  }
  const rssAtReady = rssMb(svc.child.pid);
  const proxyUrl = svc.match[1];
  const direct = new Pool(upstreamUrl, { connections: 64 });
  const proxy = new Pool(proxyUrl, { connections: 64 });
  await new Promise((r) => setTimeout(r, 1500)); // let the engine finish loading in the background

  const small = await latency(direct, proxy, 1_000, quick ? 200 : 1000, svc.child.pid);
  const large = await latency(direct, proxy, 100_000, quick ? 30 : 200, svc.child.pid);
  const seconds = quick ? 2 : 5;
  const body = chatRequest(1_000, 0);
  const rpsDirect = await throughput(direct, body, seconds, 32);
  const rpsProxy = await throughput(proxy, body, seconds, 32);
  await new Promise((r) => setTimeout(r, 2000));
  global.gc?.();
  const rssIdle = rssMb(svc.child.pid);

  await direct.close();
  await proxy.close();
  svc.child.kill('SIGTERM');
  mock.child.kill();

  const readySorted = [...readyRuns].sort((a, b) => a - b);
  const result = {
    latency_1k: small,
    latency_100k: large,
    rps: { direct: rpsDirect, proxy: rpsProxy, concurrency: 32 },
    rss_mb: { at_ready: rssAtReady, idle_after_load: rssIdle },
    ready_ms: { median: readySorted[1], runs: readyRuns },
  };
  if (args.has('--json')) {
    console.log(JSON.stringify(result, null, 2));
    return;
  }
  const f = (n) => n.toFixed(2);
  const rows = [
    ['measure', 'direct', 'via svc', 'added', 'target'],
    [
      `1k-token request (${(small.bytes / 1024).toFixed(0)} KiB) p50 ms`,
      f(small.direct.p50),
      f(small.proxy.p50),
      f(small.added.p50),
      '< 2 ms',
    ],
    ['1k-token request p99 ms', f(small.direct.p99), f(small.proxy.p99), f(small.added.p99), ''],
    [
      `100k-token request (${(large.bytes / 1024).toFixed(0)} KiB) p50 ms`,
      f(large.direct.p50),
      f(large.proxy.p50),
      f(large.added.p50),
      '< 15 ms',
    ],
    ['100k-token request p99 ms', f(large.direct.p99), f(large.proxy.p99), f(large.added.p99), ''],
    [
      'svc CPU per request ms (1k / 100k)',
      '',
      `${f(small.cpuPerRequest)} / ${f(large.cpuPerRequest)}`,
      '',
      '',
    ],
    ['requests/s (1k, 32 concurrent)', rpsDirect.toFixed(0), rpsProxy.toFixed(0), '', ''],
    ['RSS at ready MB', '', rssAtReady.toFixed(0), '', ''],
    ['idle RSS after engine load MB', '', rssIdle.toFixed(0), '', '< 100 MB'],
    ['time to ready of svc serve ms (median of 3)', '', readySorted[1].toFixed(0), '', '< 1000 ms'],
  ];
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => String(r[c]).length)));
  console.log('svc proxy bench (loopback mock upstream, engine from dist/)');
  for (const r of rows) console.log(r.map((cell, c) => String(cell).padEnd(widths[c])).join('  '));
}
