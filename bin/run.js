#!/usr/bin/env node
// CommonJS (bin/package.json): `svc serve` and `svc compress` run their bundle without starting
// Node's ES module loader (~10-25 ms of a start, issue 19).
// Fast paths first: `svc --version`, and `svc serve` and `svc compress` with plain flags (and
// files), start without loading oclif and every command (src/cli/fast-path.ts). The two commands
// run from the build's bundle, dist/src/cli-bundle/NAME.cjs, with its code cache
// (src/cli/cached-bundle.cts), or from their modules where there is none.
const { existsSync } = require('node:fs');
const { join } = require('node:path');
const { pathToFileURL } = require('node:url');

const root = join(__dirname, '..');

/** The fast path of `svc serve` or `svc compress`: true when it ran the command. */
async function fastPath(command, argv) {
  const bundle = join(root, 'dist/src/cli-bundle', `${command}.cjs`);
  const start = existsSync(bundle)
    ? require('../dist/src/cli/cached-bundle.cjs').loadCachedBundle(bundle).exports
    : await import(`../dist/src/cli/${command}-start.js`);
  return start.fastPath(argv);
}

async function main() {
  const argv = process.argv.slice(2);
  if (argv.length === 1 && argv[0] === '--version') {
    const { versionLine } = require('../dist/src/cli/version-line.cjs');
    process.stdout.write(`${versionLine(pathToFileURL(join(root, 'package.json')))}\n`);
    return;
  }
  if ((argv[0] === 'serve' || argv[0] === 'compress') && (await fastPath(argv[0], argv.slice(1)))) return;
  const { execute, settings } = await import('@oclif/core');
  // The commands always run from the compiled dist/: never look for a
  // TypeScript toolchain, whatever NODE_ENV says (oclif would under
  // "development" or "test", and warn when it is not installed).
  settings.enableAutoTranspile = false;
  // the package's root: oclif finds its package.json there (bin/ has one of its own)
  await execute({ dir: root });
}

main().catch((err) => {
  // as an ES module's top-level rejection: the error printed, exit 1
  process.exitCode = 1;
  console.error(err);
});
