#!/usr/bin/env node
// Build step, after tsc: bundles `svc compress` (dist/src/cli/compress-command.js and the engine,
// formats, CCR, stats and ML modules it loads) into a few files in dist/src/cli-bundle/, which
// the start-up fast path (src/cli/fast-path.ts) loads when they are there. Loading the ~110
// modules one by one took ~25 ms of the command's ~215 ms wall on the 12k sample (issue 19's
// target is 250 ms); the bundle is the same code, so the output is byte for byte the same.
// Packages, node: builtins and the tokenizer bundles (dist/vendor, `#tokenizer/...`) stay
// imports. The ML pass starts its worker from dist/src/ml (src/ml/ml-compressor.ts).
// test/cli/compress-bundle.test.ts checks the bundle is what runs, and that it prints the same.
import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build } from 'rolldown';

const root = resolve(import.meta.dirname, '..');
// beside the modules it is made of (removed with them by scripts/clean-dist.js)
const out = join(root, 'dist/src/cli-bundle');
rmSync(out, { recursive: true, force: true });
await build({
  input: { 'compress-command': join(root, 'dist/src/cli/compress-command.js') },
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
