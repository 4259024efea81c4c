import { parseCompressArgs } from './fast-path.js';

/**
 * Runs `svc compress ARGV` without oclif when the arguments allow it (the
 * same steps as commands/compress.ts); false when they do not. The entry of
 * the build's `compress.cjs` (scripts/bundle-cli.js).
 */
export async function fastPath(argv: readonly string[]): Promise<boolean> {
  const parsed = parseCompressArgs(argv);
  if (!parsed) return false;
  const { runCompressCommand } = await import('./compress-command.js');
  const code = await runCompressCommand(parsed.flags, parsed.args);
  if (code !== 0) process.exitCode = code;
  return true;
}
