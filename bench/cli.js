#!/usr/bin/env node
/**
 * CLI bench: oclif start-up (`svc --version`) and `svc compress` end to end
 * on the ~100k-token session (chat and messages format), wall time median of
 * several runs, peak RSS. Target: under 1 s end to end.
 *
 *   node bench/cli.js [--runs N]
 */
import { ensureGenerated } from '../fixtures/generate.js';
import { loadNote, median, ms, printTable, requireBuild, runNode } from './lib/measure.js';

requireBuild();
const i = process.argv.indexOf('--runs');
const RUNS = i === -1 ? 5 : Number(process.argv[i + 1]);
const env = { ...process.env, SERVICE_HOME: `${process.env.TMPDIR ?? '/tmp'}/svc-bench-home` };

async function measure(label, args) {
  const runs = [];
  for (let r = 0; r < RUNS; r++) {
    const run = await runNode(args, { env });
    if (run.code !== 0) throw new Error(`${label} failed (exit ${run.code}):\n${run.stderr}`);
    runs.push(run);
  }
  const wall = median(runs.map((r) => r.ms));
  const rss = runs.every((r) => r.rssMb !== undefined)
    ? `${Math.max(...runs.map((r) => r.rssMb)).toFixed(0)} MB`
    : 'n/a';
  const cpu = runs.every((r) => r.cpuMs !== undefined) ? ms(median(runs.map((r) => r.cpuMs))) : 'n/a';
  return [label, ms(wall), ms(Math.min(...runs.map((r) => r.ms))), cpu, rss];
}

const chat = ensureGenerated('100k', 'chat');
const messages = ensureGenerated('100k', 'messages');
const rows = [
  await measure('svc --version (oclif start-up)', ['bin/run.js', '--version']),
  await measure('svc compress session-100k.chat.json', ['bin/run.js', 'compress', chat, '--no-record']),
  await measure('svc compress session-100k.messages.json', [
    'bin/run.js',
    'compress',
    messages,
    '--no-record',
  ]),
];
printTable(
  `svc CLI over ${RUNS} runs (target: compress end to end < 1 s); ${loadNote()}`,
  ['command', 'wall median', 'wall best', 'CPU median (user+sys)', 'peak RSS'],
  rows,
);
