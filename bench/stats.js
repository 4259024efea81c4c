// Stats bench: cost of the request.finished subscriber on the hot path, and the
// latency of /stats, /stats-history and a savings-file flush with a savings
// file at its bounds (attribution split at its caps). Run after `npm run build`: node bench/stats.js
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { resolveConfig } from '../dist/src/config/index.js';
import { silentLogger } from '../dist/src/log.js';
import { createSvcServer } from '../dist/src/server/app.js';
import {
  addToDelta,
  applyDelta,
  emptySavings,
  HISTORY_MAX_CHECKPOINTS,
} from '../dist/src/stats/savings-data.js';

const home = mkdtempSync(join(tmpdir(), 'svc-bench-stats-'));
const HOUR = 3_600_000;

/** Nine projects, models and clients per saving: every bucket's attribution split at its cap (8 + other). */
function addAttributed(delta, time, tokensSaved, savingsUsd) {
  for (let v = 0; v < 9; v++) {
    const attribution = { project: `project-${v}`, model: `claude-sonnet-4-${v}`, client: `client-${v}` };
    addToDelta(delta, { time, tokensSaved, savingsUsd, attribution });
  }
}

function fullSavingsFile(path, now) {
  // Every rollup bucket and every checkpoint slot filled, attribution at its caps: the largest file svc keeps.
  const data = emptySavings(now - 10 * 366 * 24 * HOUR);
  for (let i = HISTORY_MAX_CHECKPOINTS + 10; i >= 0; i--) {
    const delta = new Map();
    const t = now - i * 4 * 24 * HOUR; // one point every 4 days reaches back past every retention
    addAttributed(delta, t, 1234, 0.003);
    applyDelta(data, delta, t);
  }
  for (let h = 0; h < 168; h++) {
    const delta = new Map();
    addAttributed(delta, now - h * HOUR, 10, 0.0001);
    applyDelta(data, delta, now - h * HOUR);
  }
  // as the savings file writes it (attribution rows on one line)
  writeFileSync(
    path,
    JSON.stringify(data, null, 1).replace(
      /\[\s+([^\s,\]]+),\s+([^\s,\]]+),\s+([^\s,\]]+),\s+([^\s,\]]+)\s+\]/g,
      '[$1,$2,$3,$4]',
    ),
  );
}

function event(i) {
  return {
    time: new Date(),
    path: '/v1/chat/completions',
    format: 'chat',
    mode: 'optimize',
    model: i % 3 === 0 ? 'claude-sonnet-4-5-20250929' : 'gpt-4o',
    stream: false,
    status: 200,
    upstreamStatus: 200,
    tokensBefore: 5000,
    tokensAfter: 2000,
    tokensSaved: 3000,
    transforms: [],
    latencyMs: 40,
    overheadMs: 1,
    usage: { input: 2000, output: 100, cacheRead: 500, cacheWrite: 0 },
    costUsd: undefined,
    savingsUsd: undefined,
    cached: false,
    rateLimited: false,
    compressionFailed: false,
    errorCode: undefined,
    keyHash: `key${i % 7}`,
    project: `project-${i % 5}`,
    client: i % 2 ? 'claude-code' : 'openai-sdk',
  };
}

const pct = (xs, p) => xs.slice().sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

async function timeGet(url, n) {
  const ms = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const res = await fetch(url);
    await res.arrayBuffer();
    ms.push(performance.now() - t);
  }
  return ms;
}

try {
  const savingsPath = join(home, 'proxy_savings.json');
  fullSavingsFile(savingsPath, Date.now());
  const config = resolveConfig({ flags: { port: 0, host: '127.0.0.1' }, env: { SERVICE_HOME: home } });
  const server = await createSvcServer({ config, logger: silentLogger });
  const url = await server.listen();
  const { bus, savings } = server.ctx;

  const N = 100_000;
  for (let i = 0; i < 2000; i++) bus.emit('request.finished', event(i)); // warm up
  const t0 = performance.now();
  for (let i = 0; i < N; i++) bus.emit('request.finished', event(i));
  const perEventUs = ((performance.now() - t0) * 1000) / N;

  const f0 = performance.now();
  await savings.flush();
  const flushMs = performance.now() - f0;

  const stats = await timeGet(`${url}/stats`, 200);
  const history = await timeGet(`${url}/stats-history`, 100);
  const csv = await timeGet(`${url}/stats-history?format=csv&series=hourly`, 100);
  const byProject = await timeGet(`${url}/stats-history?by=project`, 100);
  const metrics = await timeGet(`${url}/metrics`, 200);
  await server.close();

  const rows = [
    [
      'request.finished subscriber (price, count, metrics, breakdown, savings delta)',
      `${perEventUs.toFixed(2)} µs/event`,
    ],
    ['savings file at its bounds', `${(statSync(savingsPath).size / 1024).toFixed(0)} KiB`],
    [
      'flush of 100k coalesced savings into that file (lock, read, add, atomic write)',
      `${flushMs.toFixed(1)} ms`,
    ],
    ['GET /stats p50 / p99', `${pct(stats, 0.5).toFixed(2)} / ${pct(stats, 0.99).toFixed(2)} ms`],
    ['GET /stats-history p50 / p99', `${pct(history, 0.5).toFixed(2)} / ${pct(history, 0.99).toFixed(2)} ms`],
    ['GET /stats-history?format=csv&series=hourly p50', `${pct(csv, 0.5).toFixed(2)} ms`],
    ['GET /stats-history?by=project p50', `${pct(byProject, 0.5).toFixed(2)} ms`],
    ['GET /metrics p50', `${pct(metrics, 0.5).toFixed(2)} ms`],
  ];
  const width = Math.max(...rows.map((r) => r[0].length));
  console.log('stats bench');
  for (const [name, value] of rows) console.log(`  ${name.padEnd(width)}  ${value}`);
} finally {
  rmSync(home, { recursive: true, force: true });
}
