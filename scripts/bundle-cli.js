#!/usr/bin/env node
// Build step, after tsc: bundles the two commands whose start issue 19 times into one CommonJS file
// each in dist/src/cli-bundle/: `svc serve` (dist/src/cli/serve-start.js: the fast path's flag
// parsing, the server's modules and the packages they import at start) as serve.cjs, and
// `svc compress` (dist/src/cli/compress-start.js: the same parsing, the config, engine, formats
// and CCR modules) as compress.cjs. scripts/code-cache.js then runs each once to make its V8 code
// cache, and src/cli/cached-bundle.cts runs them with it (V8 keeps a code cache only for scripts:
// Node 20 compiles every ES module afresh on every start).
// Loading the modules one by one took ~85 ms of `svc serve`'s ~355 ms to ready, and ~70 ms of
// `svc compress`'s ~385 ms wall on the 12k sample, on slow hours of a 2-core machine (issue 19's
// targets are 300 and 250 ms); the code caches save most of the compiling that remained
// (docs/perf.md, the seventeenth to nineteenth passes). The bundles are the same code, so the
// output is byte for byte the same.
//
// What a bundle holds: every module loaded by a static import, packages included. What is loaded
// only later, by import(), stays where it is and loads as an ES module when it is needed
// (cached-bundle.cts's `importModule`): packages (undici on the first upstream call, ioredis for
// --store redis), the ML pass (dist/src/ml, with its optional runtime), and, for `svc compress`,
// the summary table and the savings file (lowdb is ES modules only), which this script bundles as
// two ES module entries as well. The engine is in both bundles: the server initialises it on its
// first request that compresses, as before. The tokenizer tables stay in dist/vendor; worker
// threads start from their built modules in dist/src (src/ml/ml-compressor.ts,
// src/server/large-body/pool.ts), and the dashboard reads its files from src/dashboard/assets
// (src/dashboard/assets.ts). test/cli/bundle.test.ts checks the bundles are what runs, with their
// caches, and that they do the same as the modules.
import { rmSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { build } from 'rolldown';

const root = resolve(import.meta.dirname, '..');
// beside the modules it is made of (removed with them by scripts/clean-dist.js)
const out = join(root, 'dist/src/cli-bundle');
rmSync(out, { recursive: true, force: true });
// what compress.cjs loads on some runs only: entries of an ES module bundle, by these names
const LAZY_ENTRIES = {
  'savings-file': join(root, 'dist/src/stats/savings-file.js'),
  'summary-table': join(root, 'dist/src/cli/summary-table.js'),
};
await build({
  input: LAZY_ENTRIES,
  cwd: root,
  platform: 'node',
  logLevel: 'warn',
  external: [/^node:/, /node_modules/, /^[a-z@][^:]*$/, /dist\/vendor\//, /^#/],
  output: { dir: out, format: 'esm', minify: false, sourcemap: false },
});

const ML = join(root, 'dist/src/ml/');
const BUILTINS = new Set(builtinModules);
/** The package a bare specifier names (`@scope/name` or `name`), or undefined for a path or a builtin. */
function packageOf(specifier) {
  if (specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('#')) return undefined;
  if (specifier.startsWith('node:') || BUILTINS.has(specifier.split('/')[0])) return undefined;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/**
 * Bundles `input` into the CommonJS file `file` (see the top of this file). `lazyEntries` are
 * the ES module entries above a lazy import may name.
 */
async function commonJsBundle(input, file, lazyEntries = {}) {
  const bundleDir = dirname(file);
  /** A lazy module's specifier (relative to the bundle), or undefined for one bundled. */
  const lazySpecifier = (path) => {
    const entry = Object.keys(lazyEntries).find((name) => lazyEntries[name] === path);
    if (entry) return `./${entry}.js`;
    return path.startsWith(ML) ? relative(bundleDir, path) : undefined;
  };
  const bundled = new Set();
  const lazyPackages = new Set();
  await build({
    input,
    cwd: root,
    platform: 'node',
    logLevel: 'warn',
    external: [/^node:/, ...[...BUILTINS].map((name) => new RegExp(`^${name.replace(/[/]/g, '\\/')}$`))],
    onLog(level, log, handler) {
      // the tokenizer's fallback for gpt-tokenizer itself (under the tests), never taken here
      if (log.code === 'IMPORT_IS_UNDEFINED' && log.message.includes('o200k')) return;
      // a module both imported and loaded lazily is bundled once: nothing to warn about
      if (log.code === 'INEFFECTIVE_DYNAMIC_IMPORT') return;
      handler(level, log);
    },
    plugins: [
      {
        // what is imported lazily stays out: the ML folder and the ES module entries by their
        // paths, packages by their names
        name: 'svc-lazy-modules',
        resolveId(source, importer, extra) {
          if (!importer) return null;
          const pkg = packageOf(source);
          if (pkg !== undefined) {
            if (extra?.kind === 'dynamic-import') {
              lazyPackages.add(pkg);
              return { id: source, external: true };
            }
            bundled.add(pkg);
            return null;
          }
          if (extra?.kind !== 'dynamic-import' || !source.startsWith('.')) return null;
          const specifier = lazySpecifier(resolve(dirname(importer), source));
          return specifier === undefined ? null : { id: specifier, external: true };
        },
        buildEnd() {
          const both = [...lazyPackages].filter((pkg) => bundled.has(pkg));
          if (both.length > 0)
            throw new Error(`${file}: ${both.join(', ')} both bundled and loaded lazily (two copies)`);
        },
      },
      {
        // each module's import.meta.url stays its own file's (the tokenizer finds its tables beside
        // it, the dashboard its files)
        name: 'svc-import-meta',
        transform(code, id) {
          if (!code.includes('import.meta')) return null;
          const where = JSON.stringify(relative(bundleDir, id));
          const served = code.replaceAll(
            'import.meta.url',
            `__svcFileUrl(__svcJoin(__dirname, ${where})).href`,
          );
          if (served.includes('import.meta'))
            throw new Error(`${id}: an import.meta the bundle cannot serve`);
          return served;
        },
      },
      {
        // V8 restores no import() callback with a code cache (ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING):
        // the lazy modules come through the loader's `importModule` (src/cli/cached-bundle.cts).
        // Only `import(` with one string or one name before its `)` is rewritten (every lazy import
        // the bundles have); any other `import(` stops the build rather than being rewritten blind.
        name: 'svc-import-module',
        renderChunk(code) {
          const served = code.replace(/\bimport\((?=(?:"[^"\n]*"|'[^'\n]*'|[\w$]+)\))/g, 'importModule(');
          const left = /\bimport\(/.exec(served);
          if (left)
            throw new Error(
              `${file}: an import() the loader cannot serve: ${served.slice(left.index, left.index + 60)}`,
            );
          return served;
        },
      },
    ],
    output: {
      file,
      format: 'cjs',
      codeSplitting: false,
      sourcemap: false,
      // names no module of ours shadows (tokens.ts has a `require` of its own)
      banner:
        'const __svcFileUrl = require("node:url").pathToFileURL, __svcJoin = require("node:path").join;',
    },
  });
}

await commonJsBundle(join(root, 'dist/src/cli/serve-start.js'), join(out, 'serve.cjs'));
await commonJsBundle(join(root, 'dist/src/cli/compress-start.js'), join(out, 'compress.cjs'), LAZY_ENTRIES);
