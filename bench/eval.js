#!/usr/bin/env node
/**
 * The shared scorer on ../shared/eval/dev: `svc compress` beside the
 * scorer's `mask` and `truncate` baselines (token savings and next-step
 * evidence recall; see ../shared/eval/README.md).
 *
 *   node bench/eval.js [--limit N]
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { printTable, ROOT, requireBuild, runNode } from './lib/measure.js';

requireBuild();
const EVAL = join(ROOT, '..', 'shared', 'eval');
if (!existsSync(join(EVAL, 'score.mjs'))) {
  console.log(`eval: ${EVAL} not found; skipped`);
  process.exit(0);
}
if (!existsSync(join(EVAL, 'node_modules'))) {
  execFileSync('npm', ['ci', '--prefix', EVAL, '--no-audit', '--no-fund'], { stdio: 'inherit' });
}
const i = process.argv.indexOf('--limit');
const limit = i === -1 ? [] : ['--limit', process.argv[i + 1]];
const env = { ...process.env, SERVICE_HOME: `${process.env.TMPDIR ?? '/tmp'}/svc-bench-home` };

const RUNS = [
  ['svc compress', ['--cmd', './bin/run.js compress --no-record']],
  ['baseline mask', ['--baseline', 'mask']],
  ['baseline truncate', ['--baseline', 'truncate']],
];
const rows = [];
let head;
for (const [label, args] of RUNS) {
  const run = await runNode([join(EVAL, 'score.mjs'), '--cases', join(EVAL, 'dev'), ...args, ...limit], {
    env,
  });
  if (label === 'svc compress') console.log(`\n${run.stdout.trim()}`);
  if (run.code !== 0) console.log(`eval (${label}) exited ${run.code}:\n${run.stderr}`);
  const lines = run.stdout.split('\n').filter((l) => l.startsWith('|'));
  head ??= lines[0]
    ?.split('|')
    .slice(2, -1)
    .map((c) => c.trim());
  const overall = lines.find((l) => /^\|\s*overall\s*\|/.test(l));
  if (overall)
    rows.push([
      label,
      ...overall
        .split('|')
        .slice(2, -1)
        .map((c) => c.trim()),
    ]);
}
if (head)
  printTable(
    'eval: ../shared/eval/dev, overall (scorer counts tokens itself, o200k_base)',
    ['compressor', ...head],
    rows,
  );
