#!/usr/bin/env node
/**
 * Engine bench: for sessions of about 10k, 100k and 1M tokens (generated
 * fixtures, chat format), tokens before/after, savings, engine time (cold:
 * median over fresh processes, each compressing once; warm: median of repeat
 * runs in one process, where the per-content memo helps), MB/s and peak RSS.
 *
 *   node bench/engine.js [--runs N]
 */
import { ensureGenerated } from '../fixtures/generate.js';
import { int, loadNote, median, ms, printTable, requireBuild, runNode } from './lib/measure.js';

requireBuild();
const i = process.argv.indexOf('--runs');
const RUNS = i === -1 ? 5 : Number(process.argv[i + 1]);
const SIZES = [
  ['10k', RUNS],
  ['100k', RUNS],
  ['1m', Math.max(3, Math.ceil(RUNS / 2))],
];

const rows = [];
for (const [size, processes] of SIZES) {
  const file = ensureGenerated(size, 'chat');
  const samples = [];
  for (let p = 0; p < processes; p++) {
    const run = await runNode(['bench/engine-worker.js', file, '3']);
    if (run.code !== 0) throw new Error(`engine worker failed on ${file}:\n${run.stderr}`);
    samples.push(JSON.parse(run.stdout));
  }
  const first = samples[0];
  const cold = median(samples.map((s) => s.coldMs));
  const warm = median(samples.flatMap((s) => s.warmMs));
  const saved = first.tokensBefore - first.tokensAfter;
  rows.push([
    size,
    int(first.tokensBefore),
    int(first.tokensAfter),
    `${((100 * saved) / first.tokensBefore).toFixed(1)}%`,
    ms(cold),
    ms(median(samples.map((s) => s.coldCpuMs))),
    ms(warm),
    `${(first.bytes / 1e6 / (cold / 1000)).toFixed(1)}`,
    ms(median(samples.map((s) => s.loadMs))),
    `${Math.max(...samples.map((s) => s.rssMb)).toFixed(0)} MB`,
  ]);
}
printTable(
  `engine: compressMessages on generated sessions (model gpt-4o, exact counts; cold = median of ${RUNS} fresh processes); ${loadNote()}`,
  [
    'size',
    'tokens before',
    'tokens after',
    'saved',
    'engine cold',
    'cold CPU',
    'engine warm',
    'MB/s (cold)',
    'engine load',
    'peak RSS',
  ],
  rows,
);
