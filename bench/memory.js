#!/usr/bin/env node
/**
 * Memory under load (issue 19), one server at a time, with its parts over
 * time: spawns `svc serve` (or the bare forwarding proxy, `--baseline`)
 * against a loopback mock upstream, samples RSS and /metrics
 * `service_memory_bytes{part}` every few seconds through a sustained load of
 * ~91k-token bodies at c=10 and then an idle period, and prints the samples.
 *
 *   node bench/memory.js [--quick] [--load S] [--idle S] [--mode fresh|same|session] [--baseline]
 *                        [--every S] [--node-options OPTS] [--signal SIG] [-- svc serve flags...]
 *
 * Defaults: 30 s of load, 30 s idle (`--quick`: 8 and 8), a sample every 5 s.
 * `--node-options --heapsnapshot-signal=SIGUSR2 --signal SIGUSR2` writes a
 * heap snapshot of the server at the end (into the current directory).
 *
 * fresh: every request a new conversation, every message new (300 sessions
 * cycled); same: the same body again;
 * session: conversations of several turns (each request the previous one plus
 * a new turn). Run from dist/ (`npm run build` first).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { generateSession } from '../fixtures/generate.js';
import { ROOT, requireBuild } from './lib/measure.js';
import {
  AGENT_TOOL_TOKENS,
  agentBody,
  agentSession,
  bodyPool,
  memoryParts,
  postMessages,
  rssMb,
  sleep,
  spawnPrintsPort,
  spawnSvc,
} from './lib/servers.js';

const argv = process.argv.slice(2);
const dd = argv.indexOf('--');
const own = dd === -1 ? argv : argv.slice(0, dd);
const extra = dd === -1 ? [] : argv.slice(dd + 1);
const opt = (f, d) => (own.indexOf(f) === -1 ? d : own[own.indexOf(f) + 1]);
const QUICK = own.includes('--quick');
const LOAD_S = Number(opt('--load', QUICK ? 8 : 30));
const IDLE_S = Number(opt('--idle', QUICK ? 8 : 30));
const MODE = opt('--mode', 'fresh');
const BASELINE = own.includes('--baseline');
const EVERY_S = Number(opt('--every', 5));
/** NODE_OPTIONS for the server only (e.g. `--heapsnapshot-signal=SIGUSR2`, V8 flags). */
const SVC_NODE_OPTIONS = opt('--node-options', undefined);
/** Send this signal to the server at the end (e.g. SIGUSR2 with --heapsnapshot-signal), then wait. */
const SIGNAL_AT_END = opt('--signal', undefined);

/** The server's memory parts in MB (none for the bare proxy). */
async function parts(url) {
  if (BASELINE) return {};
  const mb = await memoryParts(url);
  return Object.fromEntries(Object.entries(mb).map(([k, v]) => [k, Math.round(v)]));
}

const base = agentBody(generateSession(91_000 - AGENT_TOOL_TOKENS));
const baseText = JSON.stringify(base);
const task = base.messages[0].content[0].text;
const at = baseText.indexOf(JSON.stringify(task).slice(1, -1));
let counter = 0;
let fresh;
/** 300 different sessions for `fresh`, built when first needed. */
const pool = () => {
  fresh ??= bodyPool(agentSession, 300, { agent: true });
  return fresh;
};
/** The next body of the chosen mode. */
function nextBody() {
  const n = counter++;
  if (MODE === 'same') return baseText;
  // fresh: a session of its own, every message new (as bench/perf.js)
  if (MODE === 'fresh') return pool().fresh(n);
  // session: 10 conversations, each grows by one turn a request: the first k messages of the base
  const conv = n % 10;
  const turn = Math.floor(n / 10);
  const msgs = base.messages.slice(0, Math.max(2, base.messages.length - 40 + (turn % 40)));
  const body = { ...base, messages: msgs };
  const text = JSON.stringify(body);
  return `${text.slice(0, at)}[${process.pid}-c${conv}] ${text.slice(at)}`;
}

async function main() {
  requireBuild();
  const home = mkdtempSync(join(os.tmpdir(), 'svc-mem-'));
  const mock = await spawnPrintsPort(join(ROOT, 'bench/lib/mock-upstream.js'));
  let proc;
  try {
    proc = BASELINE
      ? await spawnPrintsPort(join(ROOT, 'bench/lib/forward-proxy.js'), [mock.url])
      : await spawnSvc(mock.url, {
          home,
          extra,
          env: SVC_NODE_OPTIONS ? { NODE_OPTIONS: SVC_NODE_OPTIONS } : {},
        });
  } catch (err) {
    // a server that did not start: the mock upstream must not keep this process alive
    mock.child.kill('SIGTERM');
    rmSync(home, { recursive: true, force: true });
    throw err;
  }
  const pid = proc.child.pid;
  const t0 = performance.now();
  const rows = [];
  const sample = async (phase) =>
    rows.push({
      t: Math.round((performance.now() - t0) / 1000),
      phase,
      rss: Math.round(rssMb(pid)),
      ...(await parts(proc.url)),
    });
  try {
    await sleep(5000);
    await sample('idle0');
    const idle0 = rssMb(pid);
    const pool = new Pool(proc.url, { connections: 32 });
    let done = 0;
    const end = performance.now() + LOAD_S * 1000;
    const sampler = (async () => {
      while (performance.now() < end - EVERY_S * 1000) {
        await sleep(EVERY_S * 1000);
        await sample('load');
      }
    })();
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        while (performance.now() < end) {
          await postMessages(pool, nextBody());
          done++;
        }
      }),
    );
    await sampler;
    await sample('end-load');
    await pool.close();
    for (let s = 0; s < IDLE_S; s += EVERY_S) {
      await sleep(EVERY_S * 1000);
      await sample('idle');
    }
    if (SIGNAL_AT_END) {
      process.kill(pid, SIGNAL_AT_END);
      await sleep(20_000);
    }
    console.table(rows);
    const last = rssMb(pid);
    console.log(
      `${BASELINE ? 'baseline' : `svc serve ${extra.join(' ')}`} mode=${MODE}: ${done} requests in ${LOAD_S} s; RSS idle ${idle0.toFixed(0)} MB, after load+idle ${last.toFixed(0)} MB: +${(last - idle0).toFixed(0)} MB`,
    );
  } finally {
    proc.child.kill('SIGTERM');
    mock.child.kill('SIGTERM');
    rmSync(home, { recursive: true, force: true });
  }
}

await main();
