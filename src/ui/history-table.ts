import Table from 'cli-table3';
import type { HistoryRecord, SeriesName } from '../stats/history-record.js';
import { usd } from './stats-rows.js';

const int = (n: number) => Math.round(n).toLocaleString('en-US');

/** Plain borders and headings when the output is not a terminal (a file, a pipe). */
function style(): { style?: { head: string[]; border: string[] } } {
  return process.stdout.isTTY ? {} : { style: { head: [], border: [] } };
}

/** One series of the history record as a terminal table (`svc history --format table`). */
export function historyTable(record: HistoryRecord, series: SeriesName): string {
  if (series === 'history') {
    const table = new Table({
      head: ['timestamp (UTC)', 'total tokens saved', 'total saved USD'],
      ...style(),
    });
    for (const c of record.history)
      table.push([c.timestamp, int(c.total_tokens_saved), usd(c.compression_savings_usd)]);
    return `${table.toString()}\n${record.history.length} checkpoints\n`;
  }
  const table = new Table({
    head: [
      'period start (UTC)',
      'tokens saved',
      'saved USD',
      'requests',
      'total tokens saved',
      'total saved USD',
    ],
    ...style(),
  });
  for (const e of record.series[series]) {
    table.push([
      e.timestamp,
      int(e.tokens_saved),
      usd(e.compression_savings_usd),
      int(e.requests),
      int(e.total_tokens_saved),
      usd(e.total_compression_savings_usd),
    ]);
  }
  return `${table.toString()}\n${record.series[series].length} ${series} periods; lifetime ${int(record.lifetime.tokens_saved)} tokens, ${usd(record.lifetime.compression_savings_usd)}\n`;
}
