#!/usr/bin/env node
// `prepare` (after `npm ci` / `npm install` in this repository): build dist/
// when the dev dependencies are there. `npm ci --omit=dev` has no compiler,
// so it only says that nothing was built (a published package ships dist/).
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

try {
  createRequire(import.meta.url).resolve('typescript');
} catch {
  console.error('svc: dev dependencies are not installed, so dist/ was not built (run `npm ci` to build).');
  process.exit(0);
}
const run = spawnSync('npm', ['run', 'build'], { stdio: 'inherit' });
process.exit(run.status ?? 1);
