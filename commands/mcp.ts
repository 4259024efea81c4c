import { Command, Flags } from '@oclif/core';
import { configFlags, resolveConfig } from '../src/config/index.js';
import { isSvcError } from '../src/errors.js';
import { defaultStatsUrl } from '../src/stats/snapshot.js';

/** `svc mcp`: an MCP server over stdio for agents that run tools themselves. */
export default class Mcp extends Command {
  static override summary = 'MCP server (stdio) with the svc_retrieve, svc_compress, svc_stats tools';
  static override description =
    `For agents that call tools themselves (Claude Code, Codex, any MCP client): redeem markers, compress content, read savings.

Works with the same stores as svc serve: a running server is asked first (its CCR store holds the markers of the requests it compressed, and what it answers is counted in its /stats); when none answers, the local stores are used: the durable CCR store and savings file of svc compress, or Redis with --store.

Register it, e.g. for Claude Code: claude mcp add svc -- svc mcp`;
  static override examples = [
    '<%= config.bin %> mcp',
    '<%= config.bin %> mcp --url http://127.0.0.1:9000',
    '<%= config.bin %> mcp --store redis://127.0.0.1:6379/0',
    'claude mcp add svc -- <%= config.bin %> mcp',
  ];
  static override flags = {
    url: Flags.string({
      summary:
        '[default: http://SERVICE_HOST:SERVICE_PORT, i.e. http://127.0.0.1:8787] the svc server to ask first',
    }),
    ...configFlags('mcp'),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(Mcp);
    let config: ReturnType<typeof resolveConfig>;
    try {
      config = resolveConfig({ flags, env: process.env });
    } catch (err) {
      if (isSvcError(err)) this.error(err.message, { exit: 2 });
      throw err;
    }
    const url = flags.url ?? defaultStatsUrl(config);
    if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
      this.error(`--url: "${url}" is not an http(s) URL`, { exit: 2 });
    }
    const { runMcpStdio } = await import('../src/mcp/server.js');
    await runMcpStdio({
      config,
      url,
      ...(process.env.SERVICE_API_KEY ? { apiKey: process.env.SERVICE_API_KEY } : {}),
    });
  }
}
