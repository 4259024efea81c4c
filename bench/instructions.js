#!/usr/bin/env node
/**
 * Instructions per request on the request path (issue 19), counted by
 * valgrind, where bench/perf.js times it: the same figure on every run of a
 * build (two checkouts of the same code differ by up to ~0.4%, where V8's
 * collections fall), so a change of half a percent shows; CPU time on this
 * 2-core machine moves by 10-20% between runs of the same build.
 *
 *   node bench/instructions.js [--against DIR] [--mode fresh|same|both] [--requests N] [--stages]
 *
 * Runs bench/instructions-worker.js (body parser, format read, engine with a
 * memo, splicer: `svc serve`'s request path without HTTP) under
 * `valgrind --tool=cachegrind --cache-sim=no` with `node --single-threaded`
 * (V8 compiles and collects on the main thread, so nothing depends on
 * timing), once with N and once with 2N requests (N: 8 new conversations,
 * 64 memoized turns, or `--requests`); the difference over N is the
 * instructions per request, the start-up and the bodies' generation left
 * out. `fresh`: new ~91k-token conversations (first sight); `same`: one
 * of them again and again (the memoized turn). `--against DIR`: the same for
 * another checkout's build (e.g. `git worktree add ../base main && cd ../base
 * && npm ci && npm run build`), and the difference. `--stages`: also each
 * stage's share (requests stopped after the body's read, then after the
 * engine).
 *
 * Instructions are not time: a change that saves instructions but misses
 * the cache more can still cost time, so bench/perf.js has the last word on
 * the targets. Skipped (exit 0) where valgrind is not installed
 * (`apt-get install valgrind`). Each count takes about a minute; two run at
 * once.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { printTable, ROOT, requireBuild } from './lib/measure.js';

const argv = process.argv.slice(2);
const opt = (flag, fallback) => (argv.includes(flag) ? argv[argv.indexOf(flag) + 1] : fallback);
const AGAINST = opt('--against', undefined);
const STAGES = argv.includes('--stages');
const MODE = opt('--mode', 'both');
/** Requests per count: a memoized turn is cheap, and its share of V8's full collections moves with where they fall. */
const REQUESTS = { fresh: 8, same: 64 };
const asked = opt('--requests', undefined);
const requestsFor = (mode) => (asked === undefined ? REQUESTS[mode] : Number(asked));

function hasValgrind() {
  return new Promise((done) => execFile('valgrind', ['--version'], (err) => done(!err)));
}

/** Instructions valgrind counted for the worker handling `count` requests of `mode` with the build at `root`. */
function instructions(root, mode, count, total, upTo) {
  const args = [
    '--tool=cachegrind',
    '--cache-sim=no',
    '--cachegrind-out-file=/dev/null',
    process.execPath,
    '--single-threaded',
    join(ROOT, 'bench', 'instructions-worker.js'),
    root,
    mode,
    String(count),
    String(total),
    upTo,
  ];
  return new Promise((done, fail) => {
    execFile('valgrind', args, { maxBuffer: 16 * 1024 * 1024 }, (err, _stdout, stderr) => {
      const m = /I\s+refs:\s+([\d,]+)/.exec(stderr);
      if (err || !m) fail(new Error(`valgrind run failed: ${err?.message ?? stderr.slice(-500)}`));
      else done(Number(m[1].replaceAll(',', '')));
    });
  });
}

/** Instructions per request: (I(2N) - I(N)) / N, the two counts run at once. */
async function perRequest(root, mode, upTo = 'splice') {
  const n = requestsFor(mode);
  const [one, two] = await Promise.all([
    instructions(root, mode, n, 2 * n, upTo),
    instructions(root, mode, 2 * n, 2 * n, upTo),
  ]);
  return (two - one) / n;
}

/** A table row: the label, each build's count in millions, and the difference of the two. */
function row(label, counts) {
  const cells = [label, ...counts.map((c) => `${(c / 1e6).toFixed(2)} M`)];
  if (counts.length === 2) cells.push(`${(((counts[0] - counts[1]) / counts[1]) * 100).toFixed(2)}%`);
  return cells;
}

async function main() {
  if (!['fresh', 'same', 'both'].includes(MODE) || !(asked === undefined || Number(asked) >= 1)) {
    console.error(
      'usage: node bench/instructions.js [--against DIR] [--mode fresh|same|both] [--requests N] [--stages]',
    );
    process.exit(2);
  }
  requireBuild();
  if (!(await hasValgrind())) {
    console.log('bench instructions: skipped, valgrind is not installed (apt-get install valgrind)');
    return;
  }
  const roots = [ROOT];
  if (AGAINST !== undefined) {
    const other = resolve(AGAINST);
    if (!existsSync(join(other, 'dist', 'src', 'engine', 'index.js'))) {
      console.error(`bench instructions: ${other} has no build (dist/); run npm run build there`);
      process.exit(2);
    }
    roots.push(other);
  }
  const modes = MODE === 'both' ? ['fresh', 'same'] : [MODE];
  const rows = [];
  for (const mode of modes) {
    const n = requestsFor(mode);
    const label = `${mode === 'fresh' ? '~91k first sight' : '~91k memoized turn'} (${n} and ${2 * n} requests)`;
    const whole = [];
    for (const root of roots) whole.push(await perRequest(root, mode));
    rows.push(row(label, whole));
    if (!STAGES) continue;
    const parse = [];
    const engine = [];
    for (const root of roots) {
      parse.push(await perRequest(root, mode, 'parse'));
      engine.push(await perRequest(root, mode, 'engine'));
    }
    rows.push(row('  body read and parsed', parse));
    rows.push(
      row(
        '  engine call (compressAndStore)',
        engine.map((e, k) => e - parse[k]),
      ),
    );
    rows.push(
      row(
        '  splice and encode',
        whole.map((w, k) => w - engine[k]),
      ),
    );
  }
  const head = ['instructions per request', 'this build', ...(AGAINST ? [AGAINST, 'this - other'] : [])];
  printTable('Request path without HTTP, under valgrind', head, rows);
}

await main();
