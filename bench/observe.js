// Observe-mode bench (issue 18 item 8): what `--observe` adds on the request path.
// The same agent-sized request (~60 KB, tools + a long tool result) goes through
// the real server to a loopback mock upstream, once with --no-optimize (pure
// passthrough) and once with --observe (forwarded untouched; compression runs
// after the response). Figures: p50 of svc's own time before the upstream call
// (`overheadMs` of each request.finished event) and p50 of the client's round
// trip; each request waits for the previous one's after-response work, so the
// projection does not steal CPU from the request measured.
// Run after `npm run build`: node bench/observe.js [--runs N]
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { resolveConfig } from '../dist/src/config/index.js';
import { silentLogger } from '../dist/src/log.js';
import { createSvcServer } from '../dist/src/server/app.js';
import { median, requireBuild } from './lib/measure.js';

requireBuild();
const argRuns = process.argv.indexOf('--runs');
const N = argRuns > 0 ? Number(process.argv[argRuns + 1]) * 100 : 300;

const REPLY = JSON.stringify({
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5',
  content: [{ type: 'text', text: 'ok' }],
  stop_reason: 'end_turn',
  usage: {
    input_tokens: 200,
    output_tokens: 5,
    cache_read_input_tokens: 9000,
    cache_creation_input_tokens: 300,
  },
});

function body(turn) {
  const tools = Array.from({ length: 20 }, (_, i) => ({
    name: `tool_${i}`,
    description: `Runs step ${i} and reports what it found, in detail.`,
    input_schema: { type: 'object', properties: { path: { type: 'string' } } },
  }));
  const rows = Array.from({ length: 400 }, (_, i) => ({
    id: i,
    file: `src/m${i % 9}/f${i}.ts`,
    status: i % 13 ? 'ok' : 'error',
  }));
  const messages = [
    { role: 'user', content: 'Check the build.' },
    {
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'toolu_1', name: 'tool_1', input: { path: '.' } }],
    },
    {
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: JSON.stringify(rows) }],
    },
    { role: 'assistant', content: 'Some files fail.' },
    { role: 'user', content: `Which ones? (turn ${turn})` },
  ];
  return JSON.stringify({
    model: 'claude-sonnet-4-5',
    max_tokens: 100,
    system: 'You are a coding agent.',
    tools,
    messages,
  });
}

const CLIENT = `
const { parentPort, workerData } = require('node:worker_threads');
parentPort.on('message', async (i) => {
  const t0 = performance.now();
  const res = await fetch(workerData.url + '/v1/messages', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
    body: workerData.bodies[i],
  });
  await res.arrayBuffer();
  parentPort.postMessage(performance.now() - t0);
});
`;

async function mode(flags) {
  const upstream = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(REPLY);
    });
  });
  await new Promise((r) => upstream.listen(0, '127.0.0.1', r));
  const home = mkdtempSync(join(tmpdir(), 'svc-bench-observe-'));
  const config = resolveConfig({
    flags: {
      port: 0,
      host: '127.0.0.1',
      cache: false,
      'messages-api-url': `http://127.0.0.1:${upstream.address().port}/v1`,
      ...flags,
    },
    env: { SERVICE_HOME: home },
  });
  const server = await createSvcServer({ config, logger: silentLogger });
  const url = await server.listen();
  const overhead = [];
  let finished = 0;
  let wake;
  server.ctx.bus.on('request.finished', (e) => {
    finished += 1;
    overhead.push(e.overheadMs);
    wake?.();
  });
  // The client runs on its own thread (its own event loop), as a real client would: the
  // after-response projection must not be timed as part of the client's round trip.
  const worker = new Worker(CLIENT, { eval: true, workerData: { url, bodies: [0, 1, 2, 3, 4].map(body) } });
  const roundTrip = [];
  for (let i = 0; i < N + 20; i++) {
    const ms = await new Promise((resolve) => {
      worker.once('message', resolve);
      worker.postMessage(i % 5);
    });
    if (i >= 20) roundTrip.push(ms);
    if (finished <= i) await new Promise((r) => (wake = r));
  }
  await worker.terminate();
  await server.close(1000);
  await new Promise((r) => upstream.close(r));
  rmSync(home, { recursive: true, force: true });
  return { overhead: median(overhead.slice(20)), roundTrip: median(roundTrip) };
}

const passthrough = await mode({ optimize: false });
const observe = await mode({ observe: true });
const fmt = (ms) => `${ms.toFixed(3)} ms`;
console.log(
  `observe mode, ${N} requests of ${(Buffer.byteLength(body(0)) / 1024).toFixed(0)} KiB each (p50)`,
);
console.log(
  `  svc time before the upstream call: --no-optimize ${fmt(passthrough.overhead)}, --observe ${fmt(observe.overhead)}, added ${fmt(observe.overhead - passthrough.overhead)} (target < 0.1 ms)`,
);
console.log(
  `  client round trip:                 --no-optimize ${fmt(passthrough.roundTrip)}, --observe ${fmt(observe.roundTrip)}, added ${fmt(observe.roundTrip - passthrough.roundTrip)}`,
);
