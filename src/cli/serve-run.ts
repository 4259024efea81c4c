import { resolveConfig } from '../config/resolve.js';
import { isSvcError } from '../errors.js';
import { createLogger } from '../log.js';
import type { createSvcServer } from '../server/app.js';
import { isMlRuntimeInstalled, startupLines } from '../server/startup.js';

/** How long in-flight requests may run after SIGINT/SIGTERM before connections are closed. */
const SHUTDOWN_GRACE_MS = 10_000;

/** Stops the command with a message and an exit code (oclif's `this.error`, or the fast path's own). */
export type Fail = (message: string, exit: number) => never;

/**
 * `svc serve` once its flags are parsed: resolves the config, builds the
 * server, listens, and stops on SIGINT/SIGTERM. Shared by the oclif command
 * and the start-up fast path of `bin/run.js` (`src/cli/serve-start.ts`).
 */
export async function runServe(flags: Record<string, unknown>, fail: Fail): Promise<void> {
  let config: ReturnType<typeof resolveConfig>;
  try {
    config = resolveConfig({ flags, env: process.env });
  } catch (err) {
    if (isSvcError(err)) fail(err.message, 2);
    throw err;
  }
  const logger = createLogger({ level: config.logLevel });
  let server: Awaited<ReturnType<typeof createSvcServer>>;
  try {
    // Imported here, not at the top: oclif loads every command to list them, and the
    // server's modules would slow down and bloat every other command.
    const { createSvcServer } = await import('../server/app.js');
    server = await createSvcServer({ config, logger });
  } catch (err) {
    // Redis unreachable (--store): exit 1, like a busy port; bad options or files: exit 2.
    if (isSvcError(err)) fail(err.message, err.code === 'SVC_STORE_UNAVAILABLE' ? 1 : 2);
    throw err;
  }
  let url: string;
  try {
    url = await server.listen();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    fail(`cannot listen on ${config.host}:${config.port} (${code ?? String(err)})`, 1);
  }
  for (const line of startupLines(config, url, isMlRuntimeInstalled(), server.ctx.mlProvider))
    logger[line.level](line.text);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) {
      logger.warn(`${signal} again: exiting now`);
      process.exit(1);
    }
    stopping = true;
    logger.info(
      `${signal}: no new connections; finishing in-flight requests (up to ${SHUTDOWN_GRACE_MS / 1000} s)`,
    );
    await server.close(SHUTDOWN_GRACE_MS);
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}
