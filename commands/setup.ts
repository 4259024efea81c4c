import { Args, Command, Flags } from '@oclif/core';
import { resolveConfig } from '../src/config/index.js';
import { isSvcError } from '../src/errors.js';
import { defaultStatsUrl } from '../src/stats/snapshot.js';

/** `svc setup claude|codex [--write]`: the agent's persistent configuration for svc. */
export default class Setup extends Command {
  static override summary = "Show (and with --write, write) an agent's configuration for svc";
  static override description =
    `Prints what would change in the agent's configuration file, as a diff; --write writes it (the old file is kept as FILE.svc-backup). Nothing is written without --write.
  claude  env.ANTHROPIC_BASE_URL = http://HOST:PORT (no /v1) in ~/.claude/settings.json ($CLAUDE_CONFIG_DIR)
  codex   model_provider = "svc" and a [model_providers.svc] table (base_url .../v1, wire_api = "responses") in ~/.codex/config.toml ($CODEX_HOME)

The agent then needs svc serve running at that address (svc doctor checks both). For one run only, without touching any file: svc wrap.`;
  static override examples = [
    '<%= config.bin %> setup claude',
    '<%= config.bin %> setup claude --write',
    '<%= config.bin %> setup codex --url http://127.0.0.1:9000 --write',
  ];
  static override args = {
    agent: Args.string({ description: 'the agent', options: ['claude', 'codex'], required: true }),
  };
  static override flags = {
    write: Flags.boolean({ summary: 'write the change (after printing it)' }),
    url: Flags.string({
      summary:
        '[default: http://SERVICE_HOST:SERVICE_PORT, i.e. http://127.0.0.1:8787] the svc server the agent uses',
    }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(Setup);
    let config: ReturnType<typeof resolveConfig>;
    try {
      config = resolveConfig({ env: process.env });
    } catch (err) {
      if (isSvcError(err)) this.error(err.message, { exit: 2 });
      throw err;
    }
    const url = (flags.url ?? defaultStatsUrl(config)).replace(/\/+$/, '');
    if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
      this.error(`--url: "${url}" is not an http(s) URL`, { exit: 2 });
    }
    const { setupPlan, unifiedDiff, writePlan } = await import('../src/agents/setup.js');
    const agent = args.agent as 'claude' | 'codex';
    let plan: Awaited<ReturnType<typeof setupPlan>>;
    try {
      plan = await setupPlan(agent, url);
    } catch (err) {
      this.error((err as Error).message, { exit: 1 });
    }
    const diff = unifiedDiff(
      plan.before ?? '',
      plan.after,
      plan.before === undefined ? '/dev/null' : plan.path,
      plan.path,
    );
    if (!diff) {
      this.log(`${plan.path} already points ${agent} at svc (${url}); nothing to change.`);
      return;
    }
    process.stdout.write(diff);
    if (!flags.write) {
      this.log(
        `\nNot written. Run svc setup ${agent} --write to apply it${flags.url ? ` (with --url ${url})` : ''}.`,
      );
      return;
    }
    const backup = await writePlan(plan);
    this.log(`\nWrote ${plan.path}${backup ? ` (the previous version is ${backup})` : ''}.`);
    this.log(
      `${agent === 'claude' ? 'Claude Code' : 'Codex'} now needs svc serve at ${url}; svc doctor checks it.`,
    );
  }
}
