import { resolveConfig } from '../config/resolve.js';
import { requestPaths } from '../quiet.js';

/**
 * `svc compress` once its arguments are parsed (oclif's flags object and the
 * file arguments): resolves the config, runs `runCompress`, and returns the
 * exit code. Shared by commands/compress.ts and the fast path of bin/run.js.
 */
export async function runCompressCommand(
  flags: Record<string, unknown>,
  files: readonly string[],
): Promise<number> {
  let failUnder: number | undefined;
  let config: ReturnType<typeof resolveConfig>;
  const failUnderFlag = flags['fail-under'] as string | undefined;
  try {
    config = resolveConfig({ flags, env: process.env });
    if (failUnderFlag !== undefined) {
      failUnder = Number(failUnderFlag);
      if (failUnderFlag.trim() === '' || !Number.isFinite(failUnder) || failUnder < 0) {
        throw new Error(`--fail-under: expected a percentage such as 30, got "${failUnderFlag}"`);
      }
    }
  } catch (err) {
    if (!(err instanceof Error)) throw err;
    process.stderr.write(`svc compress: error: ${err.message}\n`);
    return 2;
  }
  // one run, then the process exits: memos for later requests would only delay that
  requestPaths.noLaterTurns();
  const { runCompress } = await import('./compress-run.js');
  return runCompress({
    files: [...files],
    config,
    model: flags.model as string | undefined,
    inputFormat: flags['input-format'] as 'auto' | 'chat' | 'messages',
    output: flags.output as string | undefined,
    messagesOnly: flags['messages-only'] === true,
    pretty: flags.pretty === true,
    summary: flags.summary === true,
    failUnder,
    record: flags.record !== false,
  });
}
