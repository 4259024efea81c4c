import { Command } from '@oclif/core';
import { resolveConfig } from '../src/config/index.js';
import { isSvcError } from '../src/errors.js';
import { defaultStatsUrl } from '../src/stats/snapshot.js';

/** `svc wrap claude|codex [-- agent args]`: run a coding agent through svc, for this run only. */
export default class Wrap extends Command {
  static override summary = 'Run Claude Code or Codex through svc for this run only';
  static override description =
    `Uses the svc server at --url (default http://SERVICE_HOST:SERVICE_PORT) when one answers; otherwise starts svc serve on a free loopback port (same environment; its log goes to $SERVICE_HOME/logs/wrap-PID.log) and stops it afterwards. The agent gets svc for this run only, nothing is written to its configuration:
  claude  ANTHROPIC_BASE_URL=http://127.0.0.1:PORT (no /v1)
  codex   -c overrides: a model_providers.svc entry with base_url .../v1 and wire_api = "responses"

Everything after the agent's name goes to the agent (put -- before it to pass --help to the agent). SIGTERM and SIGHUP are forwarded; the agent's exit code is svc wrap's. When the agent exits, one line on stderr says what went through svc during the run. svc setup writes the same configuration permanently.`;
  static override examples = [
    '<%= config.bin %> wrap claude',
    '<%= config.bin %> wrap claude -p "summarize the failing tests"',
    '<%= config.bin %> wrap codex exec "fix the build"',
    '<%= config.bin %> wrap --url http://127.0.0.1:9000 claude -- --model sonnet',
  ];
  static override usage = ['wrap [--url URL] claude|codex [--] [AGENT ARGS...]'];
  static override strict = false;
  // Parsed by hand: every flag after the agent's name belongs to the agent.
  static override flags = {};

  async run(): Promise<void> {
    // Parsed by hand below (oclif otherwise warns, under NODE_ENV=development or test, that it was not).
    this.parsed = true;
    const argv = [...this.argv];
    let url: string | undefined;
    while (argv[0]?.startsWith('--') && argv[0] !== '--') {
      const flag = argv.shift() as string;
      if (flag === '--url') url = argv.shift();
      else if (flag.startsWith('--url=')) url = flag.slice('--url='.length);
      else
        this.error(`unknown flag ${flag} before the agent's name (flags for the agent go after it)`, {
          exit: 2,
        });
    }
    if (argv[0] === '--') argv.shift();
    const agent = argv.shift();
    const { AGENTS, agentLaunch, runAgent, startOwnServer, statsPoint, summaryLine, svcAnswers } =
      await import('../src/agents/wrap.js');
    if (agent !== 'claude' && agent !== 'codex') {
      this.error(`which agent? svc wrap ${AGENTS.join('|')} [-- agent args] (got ${agent ?? 'nothing'})`, {
        exit: 2,
      });
    }
    if (argv[0] === '--') argv.shift();
    let config: ReturnType<typeof resolveConfig>;
    try {
      config = resolveConfig({ env: process.env });
    } catch (err) {
      if (isSvcError(err)) this.error(err.message, { exit: 2 });
      throw err;
    }
    let target = (url ?? defaultStatsUrl(config)).replace(/\/+$/, '');
    if (!URL.canParse(target) || !/^https?:$/.test(new URL(target).protocol)) {
      this.error(`--url: "${target}" is not an http(s) URL`, { exit: 2 });
    }
    const launch = agentLaunch(agent, 'http://127.0.0.1', argv);
    const { findOnPath } = await import('../src/agents/paths.js');
    if (!findOnPath(launch.command, process.env.PATH)) {
      const hint =
        agent === 'claude' ? 'npm install -g @anthropic-ai/claude-code' : 'npm install -g @openai/codex';
      this.error(`${launch.command} was not found on PATH; install it: ${hint}`, { exit: 127 });
    }
    let own: Awaited<ReturnType<typeof startOwnServer>> | undefined;
    if (!(await svcAnswers(target))) {
      try {
        own = await startOwnServer(config, process.argv[1] ?? 'svc');
      } catch (err) {
        this.error(`could not start svc serve: ${(err as Error).message}`, { exit: 1 });
      }
      target = own.url;
      process.stderr.write(`svc: started svc serve at ${target} for this run (log: ${own.logPath})\n`);
    }
    const before = own ? undefined : await statsPoint(target);
    let code: number;
    try {
      code = await runAgent(agentLaunch(agent, target, argv));
    } catch (err) {
      await own?.stop();
      const e = err as NodeJS.ErrnoException;
      const hint =
        agent === 'claude' ? 'npm install -g @anthropic-ai/claude-code' : 'npm install -g @openai/codex';
      if (e.code === 'ENOENT')
        this.error(`${agent} was not found on PATH; install it: ${hint}`, { exit: 127 });
      throw err;
    }
    const after = await statsPoint(target);
    process.stderr.write(`${summaryLine(before, after, target)}\n`);
    await own?.stop();
    if (code !== 0) this.exit(code);
  }
}
