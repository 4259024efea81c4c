#!/usr/bin/env node
// Build step, after scripts/bundle-cli.js: makes the V8 code caches of the two CommonJS bundles
// (dist/src/cli-bundle/NAME.cjs.cache, read by src/cli/cached-bundle.cts). For each, a fresh Node
// process with no flags (the flags are part of what V8 checks) runs the bundle into a throwaway
// home, as `bin/run.js` runs it, then writes the bytecode of every function that ran:
// - compress.cjs: `svc compress --no-record` of the 12k-token sample;
// - serve.cjs: `svc serve` started on a free loopback port until it listens (its start only: a
//   larger cache takes longer to read at every start), then stopped.
// Another fresh process then checks V8 takes each cache, and the build fails if it does not. A
// Node of another version finds a cache rejected and compiles as without it.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setFlagsFromString } from 'node:v8';

const root = resolve(import.meta.dirname, '..');
const bundleDir = join(root, 'dist/src/cli-bundle');
const sample = join(root, 'fixtures/samples/agent-session.json');
const loader = join(root, 'dist/src/cli/cached-bundle.cjs');

/** Runs the bundle `name` as its command would, then writes its cache. */
async function make(name) {
  const { codeCacheFile, loadCachedBundle } = await import(loader);
  const bundle = join(bundleDir, name);
  rmSync(codeCacheFile(bundle), { force: true });
  const { exports, script } = loadCachedBundle(bundle);
  if (name === 'compress.cjs') {
    if (!(await exports.fastPath(['--no-record', sample])) || process.exitCode)
      throw new Error(`svc compress of the sample failed (exit ${process.exitCode})`);
  } else {
    // exits on a failure to start (printing why)
    if (
      !(await exports.fastPath([
        '--port',
        '0',
        '--host',
        '127.0.0.1',
        '--no-telemetry',
        '--log-level',
        'error',
      ]))
    )
      throw new Error('svc serve: the flags did not parse');
    // The server sets V8 flags as it starts (src/server/idle-gc.ts); a cache is taken only under
    // the flags it was made with, and every start begins with the defaults: back to them.
    setFlagsFromString('--no-expose-gc');
    setFlagsFromString('--heap-growing-percent=0');
    setFlagsFromString('--no-compact-on-every-full-gc');
  }
  writeFileSync(codeCacheFile(bundle), script.createCachedData());
}

/** Whether V8 takes the cache of the bundle `name` (loading it runs only its top level). */
async function check(name) {
  const { loadCachedBundle } = await import(loader);
  if (!loadCachedBundle(join(bundleDir, name)).cacheUsed)
    throw new Error(`V8 refused the code cache of ${name}`);
}

/** Runs this script with `args` in a fresh Node with no flags, in a throwaway home. */
function fresh(args) {
  const home = mkdtempSync(join(tmpdir(), 'svc-code-cache-'));
  try {
    const run = spawnSync(process.execPath, [import.meta.filename, ...args], {
      env: { ...process.env, SERVICE_HOME: home, NODE_OPTIONS: '' },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    if (run.status !== 0)
      throw new Error(`code cache ${args.join(' ')} failed (exit ${run.status ?? run.signal})`);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

const [step, name] = process.argv.slice(2);
if (step === '--make') {
  await make(name);
  process.exit(0); // the server started for serve.cjs would keep the process alive
} else if (step === '--check') {
  await check(name);
} else {
  for (const bundle of ['compress.cjs', 'serve.cjs']) {
    fresh(['--make', bundle]);
    fresh(['--check', bundle]);
  }
}
