import { Command } from '@oclif/core';
import { runServe } from '../src/cli/serve-run.js';
import { envOnlyHelp } from '../src/config/flags.js';
import { configFlags } from '../src/config/index.js';

/**
 * `svc serve`: the compression proxy. The work is in `src/cli/serve-run.ts`;
 * `bin/run.js` starts it without oclif when the arguments are plain flags
 * (`src/cli/serve-start.ts`), so start-up skips loading every command.
 */
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
    await runServe(flags, (message, exit) => this.error(message, { exit }));
  }
}
