#!/usr/bin/env node
/**
 * Two builds of `svc serve` taking turns on the same new ~91k-token
 * conversations (issue 19's first sight): where bench/perf.js gives each
 * build's figures on its own run, and the machine's speed moves them by
 * 10-20% between runs, a pair of requests a few milliseconds apart sees the
 * same machine, so a difference of a few tenths of a millisecond shows.
 *
 *   node bench/first-sight-ab.js [--against DIR] [--pairs N] [--warmup N]
 *
 * Each request goes to a quiet server (bench/lib/servers.js's `quiet`);
 * its CPU before forwarding is read by its own mock upstream when the
 * request arrives (as bench/perf.js reads it), its whole CPU once the server
 * is quiet again (the stats' counts after the response included). Pair k
 * sends conversation k to both, the order swapped every pair; `--warmup`
 * conversations first (40) go to both unmeasured. Prints each build's
 * medians and the median of the paired differences (this build minus the
 * other). `--against DIR`: another checkout's build (e.g. `git worktree add
 * ../base main && cd ../base && npm ci && npm run build`); without it, this
 * build against itself, which shows the noise of the pairing. `--no-cache`
 * and `--no-rate-limit` as in bench/perf.js. Run from dist/ (`npm run build`
 * first).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { Pool } from 'undici';
import { median, printTable, ROOT, requireBuild } from './lib/measure.js';
import {
  agentSession,
  bodyPool,
  cpuMs,
  mockControl,
  postMessages,
  quiet,
  spawnPrintsPort,
  spawnSvc,
  stop,
} from './lib/servers.js';

const argv = process.argv.slice(2);
const opt = (flag, fallback) => (argv.includes(flag) ? argv[argv.indexOf(flag) + 1] : fallback);
const AGAINST = opt('--against', undefined);
const PAIRS = Number(opt('--pairs', 200));
const WARMUP = Number(opt('--warmup', 40));

/** `svc serve` of the build at `root`, with a mock upstream of its own that reads the server's CPU on each arrival. */
async function start(root, home) {
  const mock = await spawnPrintsPort(join(ROOT, 'bench/lib/mock-upstream.js'));
  const { child, url } = await spawnSvc(mock.url, { home, root });
  const direct = new Pool(mock.url, { connections: 1 });
  await mockControl(direct, `/__watch?pid=${child.pid}`);
  return { mock, child, direct, pool: new Pool(url, { connections: 1 }), before: [], whole: [] };
}

/** Sends `body` to a quiet server; records its CPU before forwarding and in all. */
async function send(s, body, record) {
  await quiet(s.child.pid);
  const c0 = cpuMs(s.child.pid);
  await postMessages(s.pool, body);
  const arrival = Number(await mockControl(s.direct, '/__arrival'));
  await quiet(s.child.pid);
  if (!record) return;
  s.before.push(arrival - c0);
  s.whole.push(cpuMs(s.child.pid) - c0);
}

requireBuild();
const other = AGAINST ? resolve(AGAINST) : ROOT;
if (!existsSync(join(other, 'dist', 'src', 'engine', 'index.js'))) {
  console.error(`first-sight-ab: no build at ${other} (npm ci && npm run build there first)`);
  process.exit(2);
}
const bodies = bodyPool(agentSession, WARMUP + PAIRS + 2, { agent: true });
const homes = [0, 1].map(() => mkdtempSync(join(os.tmpdir(), 'svc-ab-')));
const servers = [];
try {
  // started inside the try: a second server that fails to start still stops the first
  servers.push(await start(ROOT, homes[0]));
  servers.push(await start(other, homes[1]));
  for (let i = 0; i < WARMUP; i++) for (const s of servers) await send(s, bodies.fresh(i), false);
  for (let k = 0; k < PAIRS; k++) {
    const body = bodies.fresh(WARMUP + k);
    const order = k % 2 === 0 ? servers : [servers[1], servers[0]];
    for (const s of order) await send(s, body, true);
  }
  const [a, b] = servers;
  const paired = (key) => median(a[key].map((v, i) => v - b[key][i]));
  const ms = (v) => `${v.toFixed(2)} ms`;
  printTable(
    `New ~91k-token conversations, ${PAIRS} pairs (CPU per request, medians)`,
    ['', 'before forwarding', 'whole (to quiet)'],
    [
      [`this build (${ROOT})`, ms(median(a.before)), ms(median(a.whole))],
      [`other (${other}${AGAINST ? '' : ', the same'})`, ms(median(b.before)), ms(median(b.whole))],
      ['this - other, paired median', ms(paired('before')), ms(paired('whole'))],
    ],
  );
} finally {
  for (const s of servers) {
    await s.pool.close();
    await s.direct.close();
    await stop(s.child);
    s.mock.child?.kill?.();
  }
  for (const home of homes) rmSync(home, { recursive: true, force: true });
}
