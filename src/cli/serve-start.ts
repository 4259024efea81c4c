import { parseServeFlags } from './fast-path.js';

/**
 * Runs `svc serve ARGV` without oclif when the arguments allow it; false when
 * they do not (`bin/run.js` then runs oclif). Errors print the way oclif's
 * `this.error` prints them, with the same exit codes. The entry of the
 * build's `serve.cjs` (scripts/bundle-cli.js).
 */
export async function fastPath(argv: readonly string[]): Promise<boolean> {
  const flags = parseServeFlags(argv);
  if (!flags) return false;
  const { runServe } = await import('./serve-run.js');
  await runServe(flags, (message, exit) => {
    process.stderr.write(` ›   Error: ${message}\n`);
    process.exit(exit);
  });
  return true;
}
