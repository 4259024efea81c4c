import { Command } from '@oclif/core';
import { envOnlyHelp } from '../src/config/flags.js';
import { configFlags, resolveConfig } from '../src/config/index.js';
import { isSvcError } from '../src/errors.js';
import { createLogger } from '../src/log.js';
import type { createSvcServer } from '../src/server/app.js';
import { isMlRuntimeInstalled, startupLines } from '../src/server/startup.js';

/** How long in-flight requests may run after SIGINT/SIGTERM before connections are closed. */
const SHUTDOWN_GRACE_MS = 10_000;

/** `svc serve`: the compression proxy. */
export default class Serve extends Command {
  static override summary = 'Run the compression proxy';
  static override description =
    `Proxies /v1/messages and /v1/chat/completions upstream, compressing each request; also serves /v1/compress, /health, /stats, /stats-history, /metrics and /dashboard.

${envOnlyHelp('serve')}`;
  static override examples = [
    '<%= config.bin %> serve',
    '<%= config.bin %> serve --port 9000 --no-cache',
    '<%= config.bin %> serve --no-optimize --log-file ./svc.jsonl',
    '<%= config.bin %> serve --store redis://127.0.0.1:6379/0   # replicas share state in Redis',
  ];
  static override flags = configFlags('serve');

  async run(): Promise<void> {
    const { flags } = await this.parse(Serve);
    let config: ReturnType<typeof resolveConfig>;
    try {
      config = resolveConfig({ flags, env: process.env });
    } catch (err) {
      if (isSvcError(err)) this.error(err.message, { exit: 2 });
      throw err;
    }
    const logger = createLogger({ level: config.logLevel });
    let server: Awaited<ReturnType<typeof createSvcServer>>;
    try {
      // Imported here, not at the top: oclif loads every command to list them, and the
      // server's modules (with the tokenizer tables) would slow down and bloat every other command.
      const { createSvcServer } = await import('../src/server/app.js');
      server = await createSvcServer({ config, logger });
    } catch (err) {
      // Redis unreachable (--store): exit 1, like a busy port; bad options or files: exit 2.
      if (isSvcError(err)) this.error(err.message, { exit: err.code === 'SVC_STORE_UNAVAILABLE' ? 1 : 2 });
      throw err;
    }
    let url: string;
    try {
      url = await server.listen();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      this.error(`cannot listen on ${config.host}:${config.port} (${code ?? String(err)})`, { exit: 1 });
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
}
