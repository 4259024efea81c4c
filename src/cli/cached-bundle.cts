import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import vm from 'node:vm';

/** A CommonJS bundle run from its source and, when V8 takes it, its code cache. */
export interface CachedBundle<T> {
  exports: T;
  /** The compiled script: `createCachedData()` after a run gives a cache with the functions that ran. */
  script: vm.Script;
  /** A cache file was read and V8 used it (false: none, or made by another V8 or flags, and compiled afresh). */
  cacheUsed: boolean;
}

/** The code cache of a bundle: beside it, `.cache` added to its name. */
export function codeCacheFile(file: string): string {
  return `${file}.cache`;
}

/**
 * Runs the CommonJS bundle `file` as Node runs a CommonJS module (same
 * wrapper, `require` from its place), with the code cache beside it
 * (`codeCacheFile`) when there is one. Node 20 keeps no code cache for ES
 * modules, so a command compiles every function it runs, each time: for
 * `svc compress` of the 12k sample ~55 ms of ~385 on a slow hour (issue 19).
 * The cache holds V8's bytecode of the functions that ran when the build made
 * it (scripts/code-cache.js). V8 checks it against its version, flags and the
 * source, and compiles from the source when it does not match, so a stale or
 * foreign cache costs only the time it saves. What the bundle imports lazily
 * (`importModule`: a path relative to `file`, or a package, resolved from
 * here as from the bundle: the same node_modules above) loads as ES modules.
 *
 * A CommonJS module itself: `bin/run.js` (CommonJS too) runs a bundle
 * without starting Node's ES module loader, ~10-25 ms of a start.
 */
export function loadCachedBundle<T>(file: string): CachedBundle<T> {
  const source = readFileSync(file, 'utf8');
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(codeCacheFile(file));
  } catch {
    // no cache: the build made none (or it was removed); compile from the source
  }
  // one line, as Node's wrapper: line numbers in stack traces stay the bundle's
  const script = new vm.Script(
    `(function (exports, require, module, __filename, __dirname, importModule) {${source}\n})`,
    { filename: file, ...(cachedData ? { cachedData } : {}) },
  );
  const module = { exports: {} as T };
  const wrapper = script.runInThisContext() as (
    exports: T,
    require: NodeJS.Require,
    module: { exports: T },
    filename: string,
    dirname: string,
    importModule: (specifier: string) => Promise<unknown>,
  ) => void;
  // V8 gives a script run from a code cache no import() (the build turns the bundle's into importModule)
  const importModule = (specifier: string) =>
    import(specifier.startsWith('.') ? pathToFileURL(resolve(dirname(file), specifier)).href : specifier);
  wrapper(module.exports, createRequire(file), module, file, dirname(file), importModule);
  return {
    exports: module.exports,
    script,
    cacheUsed: cachedData !== undefined && !script.cachedDataRejected,
  };
}
