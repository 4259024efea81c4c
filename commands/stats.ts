import { Command, Flags } from '@oclif/core';
import { resolveConfig } from '../src/config/index.js';
import { isSvcError } from '../src/errors.js';
import { DIMENSIONS, type Dimension } from '../src/stats/breakdown.js';
import { defaultStatsUrl, loadStatsSnapshot, type StatsSnapshot } from '../src/stats/snapshot.js';
import { type BreakdownView, breakdownTable, breakdownView } from '../src/ui/breakdown-table.js';
import { formatStatsText } from '../src/ui/stats-rows.js';

/** `svc stats`: live statistics of a running server, or lifetime totals when none answers. */
export default class Stats extends Command {
  static override summary = 'Show live statistics of a running svc server';
  static override description =
    'A live view of /stats refreshed every second: requests, tokens in and saved, savings %, cost and savings, cache, rate-limited, budget. ' +
    'With no server answering it shows the lifetime totals from the savings file and says so. ' +
    'Without a terminal (piped) it prints one plain snapshot.';
  static override examples = [
    '<%= config.bin %> stats',
    '<%= config.bin %> stats --url http://127.0.0.1:9000',
    '<%= config.bin %> stats --json',
    '<%= config.bin %> stats --by project',
  ];
  static override enableJsonFlag = true;
  static override flags = {
    url: Flags.string({
      summary: 'server address (default: http://SERVICE_HOST:SERVICE_PORT, i.e. http://127.0.0.1:8787)',
    }),
    by: Flags.string({
      summary:
        'one table of requests, tokens, cost and savings by project, model, client or key (API-key hash)',
      options: [...DIMENSIONS],
    }),
  };

  async run(): Promise<StatsSnapshot | BreakdownView | undefined> {
    const { flags } = await this.parse(Stats);
    let config: ReturnType<typeof resolveConfig>;
    try {
      config = resolveConfig({ env: process.env });
    } catch (err) {
      if (isSvcError(err)) this.error(err.message, { exit: 2 });
      throw err;
    }
    const url = flags.url ?? defaultStatsUrl(config);
    if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
      this.error(`--url: "${url}" is not an http(s) URL`, { exit: 2 });
    }
    const load = () => loadStatsSnapshot({ url, savingsPath: config.savingsPath });
    if (flags.by) {
      const view = breakdownView(await load(), flags.by as Dimension);
      if (!this.jsonEnabled()) this.log(breakdownTable(view));
      return view;
    }
    if (this.jsonEnabled()) return load();
    if (!process.stdout.isTTY) {
      const snapshot = await load();
      this.log(formatStatsText(snapshot));
      return snapshot;
    }
    // ink's colours (chalk) ignore NO_COLOR; FORCE_COLOR=0 turns them off before ink loads.
    if (process.env.NO_COLOR) process.env.FORCE_COLOR = '0';
    // ink and react load only for the live view, so other commands start fast.
    const { runStatsView } = await import('../src/ui/run-stats-view.js');
    await runStatsView({ load, intervalMs: 1000 });
    return undefined;
  }
}
