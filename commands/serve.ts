import { Command } from '@oclif/core';
import { configFlags, resolveConfig } from '../src/config/index.js';
import { isSvcError } from '../src/errors.js';
import { createSvcServer } from '../src/server/app.js';

/** `svc serve`: the compression proxy. */
export default class Serve extends Command {
  static override summary = 'Run the compression proxy';
  static override description =
    'Proxies /v1/messages and /v1/chat/completions upstream, compressing each request; also serves /v1/compress, /health, /stats, /stats-history, /metrics and /dashboard.';
  static override examples = ['<%= config.bin %> serve', '<%= config.bin %> serve --port 9000 --no-cache'];
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
    const server = await createSvcServer({ config });
    const url = await server.listen();
    server.ctx.logger.info(`listening on ${url} (${config.optimize ? 'optimize' : 'passthrough'} mode)`);
    server.ctx.logger.info(`upstreams: messages -> ${config.messagesApiUrl}, chat -> ${config.compatApiUrl}`);
    const stop = async (signal: string) => {
      server.ctx.logger.info(`${signal}: finishing in-flight requests`);
      await server.close();
      process.exit(0);
    };
    process.once('SIGINT', () => void stop('SIGINT'));
    process.once('SIGTERM', () => void stop('SIGTERM'));
  }
}
