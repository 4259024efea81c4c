/**
 * The processes and bodies the speed and memory benches share (bench/perf.js,
 * bench/memory.js): `svc serve` and helper servers on loopback, a process's
 * RSS and CPU from /proc (and the wait for a quiet one), `service_memory_bytes`
 * from /metrics, the mock upstream's controls, the sessions of the ~1k and
 * ~91k bodies, and pools of different sessions for "fresh" requests.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Pool } from 'undici';
import { generateSession } from '../../fixtures/generate.js';
import { proseDoc } from '../../fixtures/lib/content.js';
import { buildSession, toMessagesBody } from '../../fixtures/lib/conversation.js';
import { createRng } from '../../fixtures/lib/rng.js';
import { cpuMs } from './cpu.js';
import { ROOT } from './measure.js';

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Resident memory of a process, in MB. */
export function rssMb(pid) {
  const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

export { cpuMs };

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** Spawns a helper that prints its port on stdout (bench/lib/mock-upstream.js, forward-proxy.js). */
export function spawnPrintsPort(file, args = []) {
  const child = spawn(process.execPath, [file, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /(\d+)\n/.exec(out);
      if (m) resolve({ child, url: `http://127.0.0.1:${m[1]}` });
    });
    child.on('exit', (code) => reject(new Error(`${file} exited ${code}`)));
  });
}

/** POSTs a messages-format body to `/v1/messages` on `pool` and reads the answer; throws unless 200. */
export async function postMessages(pool, body) {
  const res = await pool.request({
    method: 'POST',
    path: '/v1/messages',
    body,
    headers: {
      'content-type': 'application/json',
      'x-api-key': 'sk-ant-bench',
      'anthropic-version': '2023-06-01',
    },
  });
  await res.body.dump();
  if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}`);
}

/** Stops a child process and waits for it to exit. */
export async function stop(child) {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/**
 * The guard flags of a bench server: none (`--no-cache --no-rate-limit`), or
 * with `guards` the defaults (response cache and rate limiter on) with limits
 * no bench reaches, so the limiter does all its work and never refuses.
 */
function guardFlags(guards) {
  if (!guards) return ['--no-cache', '--no-rate-limit'];
  return ['--rate-limit-rpm', String(1e9), '--rate-limit-tpm', String(1e15)];
}

/**
 * Spawns `svc serve` against `upstream` (`guardFlags`, a throwaway
 * SERVICE_HOME `home`, `extra` flags, `env` added), resolving when
 * GET /health answers 200, with the time that took. `root`: the checkout
 * whose build runs (this one by default).
 */
export async function spawnSvc(upstream, { home, extra = [], env = {}, guards = false, root = ROOT }) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const t0 = performance.now();
  const child = spawn(
    process.execPath,
    [
      join(root, 'bin/run.js'),
      'serve',
      '--port',
      String(port),
      '--messages-api-url',
      `${upstream}/v1`,
      '--compat-api-url',
      `${upstream}/v1`,
      '--no-telemetry',
      ...guardFlags(guards),
      '--log-level',
      'warn',
      ...extra,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, SERVICE_HOME: home, ...env } },
  );
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  const pool = new Pool(url, { connections: 1 });
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`svc serve exited ${child.exitCode}: ${stderr}`);
      try {
        const res = await pool.request({ method: 'GET', path: '/health' });
        await res.body.dump();
        if (res.statusCode === 200) break;
      } catch {
        await sleep(2);
      }
    }
  } finally {
    await pool.close();
  }
  return { child, url, readyMs: performance.now() - t0 };
}

/** The `service_memory_bytes` parts of a server's /metrics, in MB. */
export async function memoryParts(url) {
  const pool = new Pool(url, { connections: 1 });
  try {
    const res = await pool.request({ method: 'GET', path: '/metrics' });
    const text = await res.body.text();
    const parts = {};
    for (const m of text.matchAll(/^service_memory_bytes\{part="([^"]+)"\} (\S+)$/gm))
      parts[m[1]] = Number(m[2]) / 1024 / 1024;
    return parts;
  } finally {
    await pool.close();
  }
}

/**
 * Tool definitions the size of a coding agent's (18 tools, ~60 KB of JSON,
 * ~12k tokens), the same for every session, as one client sends them.
 */
export const AGENT_TOOLS = (() => {
  const rng = createRng(4242);
  const names = ['Bash', 'Read', 'Edit', 'Write', 'Glob', 'Grep', 'Task', 'TodoWrite', 'WebFetch'];
  return Array.from({ length: 18 }, (_, t) => ({
    name: `${names[t % names.length]}${t < names.length ? '' : 'Extra'}`,
    description: proseDoc(rng, 6),
    input_schema: {
      type: 'object',
      properties: {
        path: { type: 'string', description: proseDoc(rng, 1).slice(0, 300) },
        limit: { type: 'number', description: proseDoc(rng, 1).slice(0, 200) },
      },
      required: ['path'],
      additionalProperties: false,
    },
  }));
})();

/** Tokens of `AGENT_TOOLS` (o200k, counted once): a session of `n - AGENT_TOOL_TOKENS` makes an n-token body. */
export const AGENT_TOOL_TOKENS = 12_000;

/**
 * A body shaped like a coding agent's (Claude Code's): the messages first,
 * then the system prompt and the tool list, which every turn repeats after
 * the growing conversation.
 */
export function agentBody(session) {
  const b = toMessagesBody(session);
  return {
    model: b.model,
    messages: b.messages,
    system: b.system,
    tools: AGENT_TOOLS,
    max_tokens: b.max_tokens,
  };
}

/** Session `i` of the ~1.1k-token bodies (one log output, below the size the router compresses). */
export function smallSession(i) {
  return buildSession(createRng(19 + i), ['logs'], { scale: 0.5 });
}

/** Session `i` of the ~91k-token coding-agent bodies (with `agentBody`'s tools, ~91k tokens in all). */
export function agentSession(i) {
  return generateSession(91_000 - AGENT_TOOL_TOKENS, 1000 + i);
}

/**
 * Messages-format bodies of `count` different sessions (`session(i)`): `same` is the first,
 * `fresh(n)` the n-th in turn, so every message of a fresh request is new to svc. Over `count`
 * requests in a row it repeats one (a long load cycles), which no memo bounded below `count`
 * bodies can keep. With `unique`, a repeated body carries a `metadata.user_id` of its round, so
 * that a response cache (`bench/perf.js --guards`) never answers it either.
 */
export function bodyPool(session, count, { agent = false, unique = false } = {}) {
  const body = agent ? agentBody : toMessagesBody;
  const texts = Array.from({ length: count }, (_, i) => JSON.stringify(body(session(i))));
  return {
    bytes: Buffer.byteLength(texts[0]),
    same: texts[0],
    fresh: (n) => {
      const text = texts[1 + (n % (count - 1))];
      const round = Math.floor(n / (count - 1));
      return unique && round > 0
        ? `${text.slice(0, -1)},"metadata":{"user_id":"bench-round-${round}"}}`
        : text;
    },
  };
}

/** GETs `path` of the mock upstream (its `/__watch` and `/__arrival` controls) and returns the answer. */
export async function mockControl(direct, path) {
  const res = await direct.request({ method: 'GET', path });
  return res.body.text();
}

/** Quiet: under this much of the target's CPU in one `QUIET_WINDOW_MS`. */
const QUIET_CPU_MS = 0.1;
const QUIET_WINDOW_MS = 5;

/**
 * Waits until process `pid` is quiet (see `QUIET_CPU_MS`), at most `maxMs`:
 * the work a request leaves for after its response (the exact token counts
 * of the stats) is then done, and neither lands in the next request's
 * window nor is left out of its own request's CPU.
 */
export async function quiet(pid, maxMs = 2000) {
  const end = performance.now() + maxMs;
  let last = cpuMs(pid);
  while (performance.now() < end) {
    await sleep(QUIET_WINDOW_MS);
    const now = cpuMs(pid);
    if (now - last < QUIET_CPU_MS) return;
    last = now;
  }
}
