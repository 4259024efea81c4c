#!/usr/bin/env node
// Build step, after tsc: bundles `svc serve` (dist/src/cli/serve-run.js and the server's modules)
// into a few ES module files in dist/src/cli-bundle/, and `svc compress`
// (dist/src/cli/compress-command.js and the config, engine, formats and CCR modules it loads) into
// one CommonJS file there, compress.cjs, which scripts/code-cache.js then runs once to make its V8
// code cache. The start-up fast path (src/cli/fast-path.ts) loads them when they are there.
// Loading the modules one by one took ~25 ms of `svc compress`'s ~215 ms wall on the 12k sample,
// and ~85 ms of `svc serve`'s ~355 ms to ready on a slow day (issue 19's targets are 250 and
// 300 ms); compiling the command's functions, which the code cache saves, ~50 ms of ~380 ms on a
// slower one. The bundles are the same code, so the output is byte for byte the same. Packages,
// node: builtins and the tokenizer tables stay where they are. Worker threads start from their
// built modules in dist/src (src/ml/ml-compressor.ts, src/server/large-body/pool.ts), and the
// dashboard reads its files from src/dashboard/assets (src/dashboard/assets.ts).
// test/cli/bundle.test.ts checks the bundles are what runs, and that they do the same.
import { rmSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { build } from 'rolldown';

const root = resolve(import.meta.dirname, '..');
// beside the modules it is made of (removed with them by scripts/clean-dist.js)
const out = join(root, 'dist/src/cli-bundle');
rmSync(out, { recursive: true, force: true });
// what compress.cjs (below) loads on some runs only: entries of the ES module bundle, by these names
const LAZY_ENTRIES = {
  'savings-file': join(root, 'dist/src/stats/savings-file.js'),
  'summary-table': join(root, 'dist/src/cli/summary-table.js'),
};
await build({
  input: { 'serve-run': join(root, 'dist/src/cli/serve-run.js'), ...LAZY_ENTRIES },
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

// `svc compress` once more, as one CommonJS file: V8 keeps a code cache only for scripts, and
// src/cli/cached-bundle.ts runs this one with the cache scripts/code-cache.js makes. It holds
// the command's own path (config, engine, formats, CCR store, the o200k tokenizer). What it loads
// only on some runs, with the packages they import (lowdb is ES modules only), stays ES modules
// loaded when needed: the summary table and the savings file from the bundle above, the ML pass
// from dist/src.
const ML = join(root, 'dist/src/ml/');
/** The specifier compress.cjs imports a lazy module by (relative to `out`), or undefined for its own. */
function lazySpecifier(file) {
  const entry = Object.keys(LAZY_ENTRIES).find((name) => LAZY_ENTRIES[name] === file);
  if (entry) return `./${entry}.js`;
  return file.startsWith(ML) ? relative(out, file) : undefined;
}
const lazySpecifiers = new Set();
await build({
  input: join(root, 'dist/src/cli/compress-command.js'),
  cwd: root,
  platform: 'node',
  logLevel: 'warn',
  external: [/^node:/, /node_modules/, /^[a-z@][^:]*$/],
  // the tokenizer's fallback for gpt-tokenizer itself (under the tests), never taken here
  onLog(level, log, handler) {
    if (log.code !== 'IMPORT_IS_UNDEFINED' || !log.message.includes('o200k')) handler(level, log);
  },
  plugins: [
    {
      // a lazy module stays a file of dist/src, imported by its path from the bundle
      name: 'svc-lazy-modules',
      resolveId(source, importer) {
        if (!importer || !source.startsWith('.')) return null;
        const specifier = lazySpecifier(resolve(dirname(importer), source));
        if (specifier === undefined) return null;
        lazySpecifiers.add(specifier);
        return { id: specifier, external: true };
      },
    },
    {
      // each module's import.meta.url stays its own file's (the tokenizer finds its tables beside it)
      name: 'svc-module-url',
      transform(code, id) {
        if (!code.includes('import.meta.url')) return null;
        const where = JSON.stringify(relative(out, id));
        return code.replaceAll('import.meta.url', `__svcFileUrl(__svcJoin(__dirname, ${where})).href`);
      },
    },
    {
      // V8 restores no import() callback with a code cache (ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING):
      // the lazy modules come through the loader's `importModule` (src/cli/cached-bundle.ts)
      name: 'svc-import-module',
      renderChunk(code) {
        let served = code;
        for (const specifier of lazySpecifiers)
          served = served.replaceAll(
            `import(${JSON.stringify(specifier)})`,
            `importModule(${JSON.stringify(specifier)})`,
          );
        if (/\bimport\(/.test(served)) throw new Error('compress.cjs: an import() the loader cannot serve');
        return served;
      },
    },
  ],
  output: {
    file: join(out, 'compress.cjs'),
    format: 'cjs',
    codeSplitting: false,
    sourcemap: false,
    // names no module of ours shadows (tokens.ts has a `require` of its own)
    banner: 'const __svcFileUrl = require("node:url").pathToFileURL, __svcJoin = require("node:path").join;',
  },
});
