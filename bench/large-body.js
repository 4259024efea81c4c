// Large-body bench (issue 15, item 6): one ~58 MB /v1/messages body through a real `svc serve`
// process while /health is polled every 20 ms from this process; prints /health latency (p50, p99,
// max) during the request and the server's RSS before, at peak, and 30 s after.
// `--messages N` sends N small messages instead (issue 15's second case: 200k small messages).
// Run alone: `npm run build && node bench/large-body.js [--mb 58 | --messages 200000] [--after 30]
// [-- serve flags...]` (e.g. `-- --large-body-bytes 0` for the in-process path). Loopback only.

import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const MB = arg('mb', 58);
const AFTER_S = arg('after', 30);
const MESSAGES = arg('messages', 0);
const serveFlags = process.argv.includes('--') ? process.argv.slice(process.argv.indexOf('--') + 1) : [];

const LINE = 'ERROR 2025-01-01T00:00:00Z service=api path=/v1/items/12345 status=500 latency=123ms retry=3\n';
/** A Claude Code style conversation: tool calls whose results are long logs, about `mb` MB of JSON. */
function body(mb) {
  const perResult = 290_000;
  const turns = Math.ceil((mb * 1e6) / perResult);
  const messages = [{ role: 'user', content: 'Why does the build fail?' }];
  for (let i = 0; i < turns; i++) {
    messages.push({
      role: 'assistant',
      content: [{ type: 'tool_use', id: `toolu_${i}`, name: 'Bash', input: { command: `cat log-${i}.txt` } }],
    });
    const lines = [];
    for (let n = 0; lines.length * LINE.length < perResult; n++)
      lines.push(LINE.replace('12345', String(i * 1e5 + n)));
    messages.push({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: `toolu_${i}`, content: lines.join('') }],
    });
  }
  messages.push({ role: 'user', content: 'So?' });
  return JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 100, messages });
}

/** `n` short chat turns (a long-running conversation of small messages). */
function manyMessages(n) {
  const messages = [];
  for (let i = 0; i < n; i++)
    messages.push(
      i % 2 === 0
        ? { role: 'user', content: `step ${i}: check item ${i * 7} and report` }
        : { role: 'assistant', content: `item ${i * 7 - 7} is fine` },
    );
  if (messages.at(-1).role !== 'user') messages.push({ role: 'user', content: 'So?' });
  return JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 100, messages });
}

const rssOf = (pid) => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : Number.NaN;
};
const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const upstream = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const text = JSON.stringify({
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [{ type: 'text', text: 'ok' }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 10, output_tokens: 1 },
    });
    res.writeHead(200, { 'content-type': 'application/json' }).end(text);
  });
});
await new Promise((r) => upstream.listen(0, '127.0.0.1', r));
const home = mkdtempSync(join(tmpdir(), 'svc-bench-large-'));
const child = spawn(
  process.execPath,
  [
    ...(process.env.BENCH_PROF ? ['--cpu-prof', '--cpu-prof-dir=/tmp/prof'] : []),
    'bin/run.js',
    'serve',
    '--port',
    '0',
    '--messages-api-url',
    `http://127.0.0.1:${upstream.address().port}/v1`,
    '--no-telemetry',
    ...serveFlags,
  ],
  { env: { ...process.env, SERVICE_HOME: home }, stdio: ['ignore', 'ignore', 'pipe'] },
);
let stderr = '';
child.stderr.on('data', (d) => {
  stderr += d;
});
while (!/listening on (http:\/\/\S+)/.test(stderr)) {
  if (child.exitCode !== null) throw new Error(stderr);
  await sleep(50);
}
const url = /listening on (http:\/\/\S+)/.exec(stderr)[1];
const text = MESSAGES > 0 ? manyMessages(MESSAGES) : body(MB);
// warm the engine with a small request first, as a running server would be
await (
  await fetch(`${url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'k' },
    body: body(0.5),
  })
).text();
await sleep(2000);
const rssBefore = rssOf(child.pid);
let peak = rssBefore;
let done = false;
const latencies = [];
const poll = (async () => {
  while (!done) {
    const t = performance.now();
    await (await fetch(`${url}/health`)).text();
    latencies.push(performance.now() - t);
    peak = Math.max(peak, rssOf(child.pid));
    await sleep(20);
  }
})();
const t0 = performance.now();
const res = await fetch(`${url}/v1/messages`, {
  method: 'POST',
  headers: { 'content-type': 'application/json', 'x-api-key': 'k' },
  body: text,
});
await res.text();
const requestMs = performance.now() - t0;
done = true;
await poll;
const stats = await (await fetch(`${url}/stats`)).json();
const trace = [];
for (let s = 0; s < AFTER_S; s++) {
  await sleep(1000);
  peak = Math.max(peak, rssOf(child.pid));
  if (process.env.BENCH_TRACE)
    trace.push(`${rssOf(child.pid).toFixed(0)}/${readdirSync(`/proc/${child.pid}/task`).length}`);
}
if (trace.length) console.log(`RSS MB / threads each second after: ${trace.join(' ')}`);
const rssAfter = rssOf(child.pid);
child.kill('SIGTERM');
upstream.close();
rmSync(home, { recursive: true, force: true });
const sorted = latencies.sort((a, b) => a - b);
console.log(
  `large body: ${(Buffer.byteLength(text) / 1e6).toFixed(1)} MB${MESSAGES > 0 ? ` (${MESSAGES} messages)` : ''}, status ${res.status}, ${requestMs.toFixed(0)} ms${serveFlags.length ? ` (serve ${serveFlags.join(' ')})` : ''}`,
);
console.log(
  `compressed: ${stats.requests?.compression_failed ? 'no (compression failed: forwarded as sent)' : 'yes'}, tokens saved ${stats.tokens?.saved ?? '?'}`,
);
console.log(
  `/health during it: ${sorted.length} polls, p50 ${pct(sorted, 50).toFixed(1)} ms, p99 ${pct(sorted, 99).toFixed(1)} ms, max ${sorted.at(-1).toFixed(1)} ms (target p99 < 100 ms)`,
);
console.log(
  `RSS: before ${rssBefore.toFixed(0)} MB, peak ${peak.toFixed(0)} MB, ${AFTER_S} s after ${rssAfter.toFixed(0)} MB (${(rssAfter - rssBefore).toFixed(0)} MB over; target < 100 MB)`,
);
