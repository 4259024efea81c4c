#!/usr/bin/env node
/**
 * CPU per forwarded request (issue 19, the `--no-optimize` requests/s
 * target): the ~1k-token body of bench/perf.js sent again and again at c=10
 * through one server, and that server's CPU (user + sys) per request, in
 * windows of a few seconds after a warm-up. `--body 91k --concurrency 1`:
 * the memoized turn of a long session at steady state (the ~91k-token
 * conversation of bench/perf.js again and again, one at a time, after
 * `--warmup` turns), where bench/perf.js measures a few hundred turns into
 * a server's life, unpinned, interleaved with direct requests and back to
 * back. On Linux with `taskset`, the
 * server runs alone on CPU 1 and this sender and the mock upstream on CPU 0,
 * so the figure does not move with which process the scheduler favours (on
 * two cores, unpinned, it moves by +-10 %).
 *
 *   node bench/forward-cpu.js [--target no-optimize|svc|baseline] [--secs S] [--windows N]
 *                             [--body 1k|91k] [--concurrency C] [--warmup N]
 *
 * no-optimize: `svc serve --no-optimize`; svc: `svc serve`; baseline: the
 * bare forwarding proxy (bench/lib/forward-proxy.js). `--no-cache` and
 * `--no-rate-limit` as in bench/perf.js. Requests/s here are not the ratio of
 * bench/perf.js (there every process shares both cores); compare the CPU.
 * Run from dist/ (`npm run build` first).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { median, requireBuild } from './lib/measure.js';
import {
  agentSession,
  bodyPool,
  cpuMs,
  postMessages,
  smallSession,
  spawnPrintsPort,
  spawnSvc,
  stop,
} from './lib/servers.js';

const argv = process.argv.slice(2);
const opt = (f, d) => (argv.indexOf(f) === -1 ? d : argv[argv.indexOf(f) + 1]);
const TARGET = opt('--target', 'no-optimize');
const SECS = Number(opt('--secs', 4));
const WINDOWS = Number(opt('--windows', 4));
const BODY = opt('--body', '1k');
const CONCURRENCY = Number(opt('--concurrency', 10));
const WARMUP = Number(opt('--warmup', 2000));

/** Pins the processes when `taskset` is there; false when it is not. */
function pin(serverPid, others) {
  try {
    execFileSync('taskset', ['-a', '-p', '-c', '1', String(serverPid)], { stdio: 'ignore' });
    for (const pid of others)
      execFileSync('taskset', ['-a', '-p', '-c', '0', String(pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

async function main() {
  requireBuild();
  if (!['no-optimize', 'svc', 'baseline'].includes(TARGET)) {
    console.error('--target is one of no-optimize, svc, baseline');
    process.exit(2);
  }
  if (!['1k', '91k'].includes(BODY)) {
    console.error('--body is 1k or 91k');
    process.exit(2);
  }
  if (!Number.isInteger(CONCURRENCY) || CONCURRENCY < 1 || !Number.isInteger(WARMUP) || WARMUP < 0) {
    console.error('--concurrency is a whole number from 1, --warmup one from 0');
    process.exit(2);
  }
  // the ~1.1k-token and ~91k-token bodies of bench/perf.js
  const body =
    BODY === '1k' ? bodyPool(smallSession, 1).same : bodyPool(agentSession, 1, { agent: true }).same;
  const home = mkdtempSync(join(os.tmpdir(), 'svc-forward-cpu-'));
  const mock = await spawnPrintsPort(new URL('./lib/mock-upstream.js', import.meta.url).pathname);
  const server =
    TARGET === 'baseline'
      ? await spawnPrintsPort(new URL('./lib/forward-proxy.js', import.meta.url).pathname, [mock.url])
      : await spawnSvc(mock.url, { home, extra: TARGET === 'no-optimize' ? ['--no-optimize'] : [] });
  const pinned = pin(server.child.pid, [mock.child.pid, process.pid]);
  const pool = new Pool(server.url, { connections: CONCURRENCY });
  const send = () => postMessages(pool, body);
  try {
    for (let i = 0; i < WARMUP; i++) await send();
    const cpu = [];
    const rps = [];
    for (let w = 0; w < WINDOWS; w++) {
      let done = 0;
      const c0 = cpuMs(server.child.pid);
      const end = performance.now() + SECS * 1000;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (performance.now() < end) {
            await send();
            done++;
          }
        }),
      );
      cpu.push(((cpuMs(server.child.pid) - c0) * 1000) / done);
      rps.push(done / SECS);
    }
    const f = (xs) => xs.map((x) => x.toFixed(0)).join(' ');
    console.log(
      `${TARGET}, ~${BODY} c=${CONCURRENCY} after ${WARMUP}${pinned ? ' (pinned: server on CPU 1)' : ' (not pinned)'}: CPU us/request median ${median(cpu).toFixed(0)} [${f(cpu)}], requests/s ${f(rps)}`,
    );
  } finally {
    await pool.close();
    await stop(server.child);
    await stop(mock.child);
    rmSync(home, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
