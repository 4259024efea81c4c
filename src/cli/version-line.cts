import { readFileSync } from 'node:fs';

/**
 * `svc-proxy/0.1.0 linux-x64 node-v20.18.1`, as oclif's `--version` prints it.
 * The start-up fast path of `bin/run.js` prints it; this module imports
 * nothing else, so `svc --version` loads no other module of svc, and it is
 * CommonJS, as `bin/run.js` is, so Node's ES module loader does not start.
 */
export function versionLine(packageJsonUrl: URL): string {
  const pkg = JSON.parse(readFileSync(packageJsonUrl, 'utf8')) as { name: string; version: string };
  return `${pkg.name}/${pkg.version} ${process.platform}-${process.arch} node-${process.version}`;
}
