#!/usr/bin/env node
// Build step, after scripts/bundle-cli.js: makes the V8 code cache of `svc compress`'s CommonJS
// bundle (dist/src/cli-bundle/compress.cjs.cache, read by src/cli/cached-bundle.ts). A fresh
// Node process with no flags (the flags are part of what V8 checks) runs the bundle on the
// 12k-token sample, as `svc compress --no-record` would, into a throwaway home, then writes the
// bytecode of every function that ran. A Node of another version finds the cache rejected and
// compiles as without it.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const bundle = join(root, 'dist/src/cli-bundle/compress.cjs');
const sample = join(root, 'fixtures/samples/agent-session.json');

if (process.argv[2] === '--run') {
  const { codeCacheFile, loadCachedBundle } = await import(join(root, 'dist/src/cli/cached-bundle.js'));
  rmSync(codeCacheFile(bundle), { force: true });
  const { exports, script } = loadCachedBundle(bundle);
  const code = await exports.runCompressCommand({ record: false, 'input-format': 'auto' }, [sample]);
  if (code !== 0) throw new Error(`svc compress of the sample exited ${code}`);
  writeFileSync(codeCacheFile(bundle), script.createCachedData());
} else {
  const home = mkdtempSync(join(tmpdir(), 'svc-code-cache-'));
  try {
    const run = spawnSync(process.execPath, [import.meta.filename, '--run'], {
      env: { ...process.env, SERVICE_HOME: home, NODE_OPTIONS: '' },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    if (run.status !== 0) throw new Error(`making the code cache failed (exit ${run.status ?? run.signal})`);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
