#!/usr/bin/env node
/**
 * `npm run bench`: runs every area bench, each in its own process, in order.
 * `npm run bench -- engine` runs one (or several: `-- engine cli`); options
 * such as `--runs 3` are passed on to each bench.
 *
 * An area bench is any `bench/<area>.js` (or `.mjs`) that prints its own
 * table and can be run alone; drop a file in and it is picked up. The
 * known ones run first in ORDER, the rest after in name order.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const ORDER = ['engine', 'tokenizers', 'cli', 'eval'];
/** Files in bench/ that are helpers, not area benches. */
const NOT_AREAS = new Set(['run', 'engine-worker']);

const found = new Map(
  readdirSync(HERE)
    .filter((f) => /\.m?js$/.test(f))
    .map((f) => [f.replace(/\.m?js$/, ''), f])
    .filter(([name]) => !NOT_AREAS.has(name) && !name.endsWith('-worker')),
);
const all = [
  ...ORDER.filter((n) => found.has(n)),
  ...[...found.keys()].filter((n) => !ORDER.includes(n)).sort(),
];
// Area names, plus options passed on to every bench (`-- engine --runs 3`).
const asked = [];
const passOn = [];
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  if (!argv[i].startsWith('-')) asked.push(argv[i]);
  else {
    passOn.push(argv[i]);
    if (argv[i + 1] !== undefined && !argv[i + 1].startsWith('-')) passOn.push(argv[++i]);
  }
}
const unknown = asked.filter((a) => !found.has(a));
if (unknown.length > 0) {
  console.error(`bench: no bench named ${unknown.join(', ')}; available: ${all.join(', ')}`);
  process.exit(2);
}
const areas = asked.length > 0 ? asked : all;
const failed = [];
for (const area of areas) {
  console.log(`\n=== bench: ${area} ===`);
  const started = Date.now();
  const run = spawnSync(process.execPath, [join(HERE, found.get(area)), ...passOn], {
    stdio: 'inherit',
    cwd: join(HERE, '..'),
  });
  console.log(
    `(${area}: ${((Date.now() - started) / 1000).toFixed(1)} s${run.status === 0 ? '' : `, exit ${run.status}`})`,
  );
  if (run.status !== 0) failed.push(area);
}
if (failed.length > 0) {
  console.error(`\nbench: failed: ${failed.join(', ')}`);
  process.exit(1);
}
