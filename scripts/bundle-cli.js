#!/usr/bin/env node
// Build step, after tsc: bundles `svc compress` (dist/src/cli/compress-command.js and the engine,
// formats, CCR, stats and ML modules it loads) and `svc serve` (dist/src/cli/serve-run.js and the
// server's modules) into a few files in dist/src/cli-bundle/, which the start-up fast path
// (src/cli/fast-path.ts) loads when they are there. Loading the modules one by one took ~25 ms
// of `svc compress`'s ~215 ms wall on the 12k sample, and ~85 ms of `svc serve`'s ~355 ms to
// ready on a slow day (issue 19's targets are 250 and 300 ms); the bundle is the same code, so
// the output is byte for byte the same. The two share chunks (the engine, the formats), so a
// process loads each module once. Packages, node: builtins and the tokenizer bundles
// (dist/vendor, `#tokenizer/...`) stay imports. Worker threads start from their built modules in
// dist/src (src/ml/ml-compressor.ts, src/server/large-body/pool.ts), and the dashboard reads its
// files from src/dashboard/assets (src/dashboard/assets.ts).
// test/cli/bundle.test.ts checks the bundles are what runs, and that they do the same.
import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build } from 'rolldown';

const root = resolve(import.meta.dirname, '..');
// beside the modules it is made of (removed with them by scripts/clean-dist.js)
const out = join(root, 'dist/src/cli-bundle');
rmSync(out, { recursive: true, force: true });
await build({
  input: {
    'compress-command': join(root, 'dist/src/cli/compress-command.js'),
    'serve-run': join(root, 'dist/src/cli/serve-run.js'),
  },
  cwd: root,
  platform: 'node',
  logLevel: 'warn',
  // a module both imported and loaded lazily stays in its chunk: not worth a warning here
  onLog(level, log, handler) {
    if (log.code !== 'INEFFECTIVE_DYNAMIC_IMPORT') handler(level, log);
  },
  external: [/^node:/, /node_modules/, /^[a-z@][^:]*$/, /dist\/vendor\//, /^#/],
  output: { dir: out, format: 'esm', minify: false, sourcemap: false },
});
