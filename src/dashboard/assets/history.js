// @ts-check
/** The historical view: lifetime totals, a chart pair per rollup series, exports. */
import { barChart, compactNumber, compactUsd } from './charts.js';
import { formatInt, formatPeriod, formatUsd } from './format.js';
import { fillFields } from './live.js';

/** @typedef {'hourly' | 'daily' | 'weekly' | 'monthly'} RollupName */
/** @typedef {{ timestamp: string, tokens_saved: number, compression_savings_usd: number }} RollupEntry */

/** @type {Record<RollupName, string>} */
const PERIOD_WORD = { hourly: 'hour', daily: 'day', weekly: 'week', monthly: 'month' };
const EMPTY_TEXT =
  'Send requests through the proxy (/v1/messages, /v1/chat/completions, /v1/compress) or run `svc compress`; savings appear here once they are checkpointed.';

/**
 * The entries of one series of a `/stats-history` record (empty if absent).
 * @param {unknown} record
 * @param {RollupName} name
 * @returns {RollupEntry[]}
 */
export function seriesEntries(record, name) {
  const series = /** @type {{ series?: Record<string, unknown> } | null} */ (record)?.series;
  const entries = series?.[name];
  return Array.isArray(entries) ? entries : [];
}

/** @param {unknown} value */
const isRollup = (value) =>
  value === 'hourly' || value === 'daily' || value === 'weekly' || value === 'monthly';

export class HistoryView {
  /** @param {Document} doc */
  constructor(doc) {
    this.doc = doc;
    /** @type {RollupName} */
    this.series = 'daily';
    /** @type {unknown} */
    this.record = undefined;
    /** @type {Array<{ destroy(): void }>} */
    this.charts = [];
    this.drawnKey = '';
    /** @param {string} id */
    const byId = (id) => /** @type {HTMLElement} */ (doc.getElementById(id));
    this.section = byId('history');
    this.empty = byId('history-empty');
    this.emptyText = byId('history-empty-text');
    this.chartsBox = byId('history-charts');
    this.error = byId('history-error');
    this.exportJson = /** @type {HTMLAnchorElement} */ (byId('export-json'));
    this.exportCsv = /** @type {HTMLAnchorElement} */ (byId('export-csv'));
    byId('series-switch').addEventListener('change', (event) => {
      const value = /** @type {HTMLInputElement} */ (event.target).value;
      if (isRollup(value)) this.select(/** @type {RollupName} */ (value));
    });
    const checked = doc.querySelector('input[name="series"]:checked');
    if (checked instanceof HTMLInputElement && isRollup(checked.value))
      this.series = /** @type {RollupName} */ (checked.value);
    this.updateExports();
  }

  /** @param {RollupName} name */
  select(name) {
    this.series = name;
    this.updateExports();
    this.render();
  }

  /** Points both export links at the endpoint's own output for the selected series. */
  updateExports() {
    for (const [link, format] of /** @type {const} */ ([
      [this.exportJson, 'json'],
      [this.exportCsv, 'csv'],
    ])) {
      link.href = `stats-history?format=${format}&series=${this.series}`;
      // The JSON body is the whole record (every series), as /stats-history defines it.
      link.download = format === 'json' ? 'svc-stats-history.json' : `svc-savings-${this.series}.csv`;
    }
  }

  /** @param {unknown} record a `/stats-history` JSON record */
  setRecord(record) {
    this.record = record;
    this.error.hidden = true;
    this.section.classList.remove('stale-data');
    fillFields(this.section, 'data-history-field', record);
    this.render();
  }

  /** @param {Error} err */
  setError(err) {
    this.error.hidden = false;
    this.error.textContent = `History could not be loaded. ${err.message}`;
    if (this.record === undefined) {
      // Nothing good to show yet: say so instead of drawing empty axes.
      this.clearCharts();
      this.chartsBox.hidden = true;
      this.empty.hidden = true;
    } else {
      this.section.classList.add('stale-data');
    }
  }

  clearCharts() {
    for (const chart of this.charts) chart.destroy();
    this.charts = [];
    this.drawnKey = '';
  }

  /** @param {boolean} [force] redraw even when the data is unchanged (theme switch) */
  render(force = false) {
    if (this.record === undefined) return;
    const entries = seriesEntries(this.record, this.series);
    const anyData = ['hourly', 'daily', 'weekly', 'monthly'].some(
      (n) => seriesEntries(this.record, /** @type {RollupName} */ (n)).length > 0,
    );
    const showCharts = entries.length > 0;
    this.empty.hidden = showCharts;
    this.emptyText.textContent = anyData
      ? `No savings in the ${this.series} series; it keeps only recent ${PERIOD_WORD[this.series]}s. Pick a longer series.`
      : EMPTY_TEXT;
    this.chartsBox.hidden = !showCharts;
    this.chartsBox.dataset.series = this.series;
    if (!showCharts) return this.clearCharts();
    const key = `${this.series}:${JSON.stringify(entries)}`;
    if (key === this.drawnKey && !force) return;
    this.clearCharts();
    this.drawnKey = key;
    for (const word of this.doc.querySelectorAll('.period-word')) word.textContent = PERIOD_WORD[this.series];
    const xs = entries.map((e) => Date.parse(e.timestamp) / 1000);
    const series = this.series;
    const formatTime = (/** @type {number} */ s) => formatPeriod(new Date(s * 1000).toISOString(), series);
    const intTicks = (/** @type {number} */ v) => (Number.isInteger(v) ? compactNumber(v) : '');
    this.charts.push(
      barChart(
        /** @type {HTMLElement} */ (this.doc.getElementById('chart-tokens')),
        xs,
        entries.map((e) => e.tokens_saved),
        {
          label: 'tokens saved',
          colorVar: '--series-tokens',
          format: formatInt,
          formatAxis: intTicks,
          xKind: 'time',
          timeUnit: series,
          formatTime,
        },
      ),
      barChart(
        /** @type {HTMLElement} */ (this.doc.getElementById('chart-usd')),
        xs,
        entries.map((e) => e.compression_savings_usd),
        {
          label: 'USD saved',
          colorVar: '--series-usd',
          format: formatUsd,
          formatAxis: compactUsd,
          xKind: 'time',
          timeUnit: series,
          formatTime,
        },
      ),
    );
    this.renderTable(entries);
  }

  /** @param {RollupEntry[]} entries */
  renderTable(entries) {
    const body = /** @type {HTMLTableSectionElement} */ (this.doc.querySelector('#history-table tbody'));
    body.replaceChildren(
      ...[...entries].reverse().map((e) => {
        const row = this.doc.createElement('tr');
        for (const text of [
          formatPeriod(e.timestamp, this.series),
          formatInt(e.tokens_saved),
          formatUsd(e.compression_savings_usd),
        ]) {
          const cell = this.doc.createElement('td');
          cell.textContent = text;
          row.append(cell);
        }
        return row;
      }),
    );
  }
}
