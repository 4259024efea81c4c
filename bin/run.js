#!/usr/bin/env node
// Fast paths first (src/cli/fast-path.ts): `svc --version`, and `svc serve`
// and `svc compress` with plain flags, start without loading oclif and every command.
const argv = process.argv.slice(2);
let done = false;
if (argv.length === 1 && argv[0] === '--version') {
  const { versionLine } = await import('../dist/src/cli/version-line.js');
  process.stdout.write(`${versionLine(new URL('../package.json', import.meta.url))}\n`);
  done = true;
} else if (argv[0] === 'serve') {
  const { serveFastPath } = await import('../dist/src/cli/fast-path.js');
  done = await serveFastPath(argv.slice(1));
} else if (argv[0] === 'compress') {
  const { compressFastPath } = await import('../dist/src/cli/fast-path.js');
  done = await compressFastPath(argv.slice(1));
}
if (!done) {
  const { execute, settings } = await import('@oclif/core');
  // The commands always run from the compiled dist/: never look for a
  // TypeScript toolchain, whatever NODE_ENV says (oclif would under
  // "development" or "test", and warn when it is not installed).
  settings.enableAutoTranspile = false;
  await execute({ dir: import.meta.url });
}
