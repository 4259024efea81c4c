import { Command, Flags } from '@oclif/core';
import { configFlags, resolveConfig } from '../src/config/index.js';
import { isSvcError } from '../src/errors.js';
import { loadFleetHistory } from '../src/stats/fleet-history.js';
import { buildHistoryBy, type HistoryByRecord, renderHistoryBy } from '../src/stats/history-by.js';
import { renderHistory } from '../src/stats/history-export.js';
import { type LoadedHistory, loadHistory } from '../src/stats/history-load.js';
import { type HistoryRecord, SERIES_NAMES, type SeriesName } from '../src/stats/history-record.js';
import { writeFileAtomic } from '../src/stats/savings-adapter.js';
import { emptySavings, HISTORY_DIMENSIONS, type HistoryDimension } from '../src/stats/savings-data.js';

/** `svc history`: the durable savings history, read from the savings file (no server needed). */
export default class History extends Command {
  static override summary = 'Print the durable savings history (same content as GET /stats-history)';
  static override description =
    'Reads the savings file directly (SERVICE_SAVINGS_PATH, default ~/.svc/proxy_savings.json). ' +
    'json prints the whole record; csv and table print one series (csv default: history, table default: daily).';
  static override examples = [
    '<%= config.bin %> history',
    '<%= config.bin %> history --format csv --series daily --output savings-daily.csv',
    '<%= config.bin %> history --format table --series weekly',
    '<%= config.bin %> history --store redis://127.0.0.1:6379/0   # the whole fleet',
    '<%= config.bin %> history --by project --format csv --series daily',
  ];
  static override enableJsonFlag = true;
  static override flags = {
    format: Flags.string({ summary: 'output format', options: ['json', 'csv', 'table'], default: 'json' }),
    series: Flags.string({ summary: 'series for csv and table', options: [...SERIES_NAMES] }),
    by: Flags.string({
      summary: 'split the proxy savings by project, model or client (same record as GET /stats-history?by=)',
      options: [...HISTORY_DIMENSIONS],
    }),
    output: Flags.string({ summary: 'write to this file (atomically) instead of stdout', char: 'o' }),
    // The shared-store options (same names, env vars and checks as serve): the fleet's history.
    ...configFlags('history'),
  };

  async run(): Promise<HistoryRecord | HistoryByRecord> {
    const { flags } = await this.parse(History);
    let config: ReturnType<typeof resolveConfig>;
    try {
      config = resolveConfig({ flags, env: process.env });
    } catch (err) {
      if (isSvcError(err)) this.error(err.message, { exit: 2 });
      throw err;
    }
    const { savingsPath } = config;
    let loaded: LoadedHistory;
    try {
      loaded = config.store
        ? await loadFleetHistory(config.store, config.storePrefix, Date.now())
        : await loadHistory(savingsPath, Date.now());
    } catch (err) {
      if (isSvcError(err)) this.error(err.message, { exit: 1 });
      throw err;
    }
    if (loaded.state === 'malformed') {
      this.warn(
        `${savingsPath} is malformed (${loaded.reason}); showing an empty history. svc serve moves it aside.`,
      );
    }
    const byRecord = flags.by
      ? buildHistoryBy(loaded.data ?? emptySavings(Date.now()), flags.by as HistoryDimension, Date.now())
      : undefined;
    if (this.jsonEnabled()) return byRecord ?? loaded.record;
    let body: string;
    if (byRecord) {
      if (flags.format === 'table') this.error('--by prints json or csv (--format json|csv)', { exit: 2 });
      const format = flags.format === 'csv' ? 'csv' : 'json';
      body = renderHistoryBy(
        byRecord,
        { format, series: (flags.series ?? 'history') as SeriesName },
        true,
      ).body;
    } else if (flags.format === 'table') {
      const { historyTable } = await import('../src/ui/history-table.js');
      body = historyTable(loaded.record, (flags.series ?? 'daily') as SeriesName);
    } else {
      const format = flags.format === 'csv' ? 'csv' : 'json';
      body = renderHistory(
        loaded.record,
        { format, series: (flags.series ?? 'history') as SeriesName },
        true,
      ).body;
    }
    if (flags.output) {
      await writeFileAtomic(flags.output, body);
      this.logToStderr(`wrote ${flags.output}`);
    } else process.stdout.write(body);
    return byRecord ?? loaded.record;
  }
}
