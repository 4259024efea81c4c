// @ts-check
/** The live panel: figures from `/stats`, the budget bars and the compression-ratio distribution. */
import { barChart, compactNumber } from './charts.js';
import { formatUsd, formatValue } from './format.js';
import { binLabel } from './metrics.js';

/** @typedef {import('./metrics.js').HistogramBin} HistogramBin */
/** @typedef {import('./format.js').ValueFormat} ValueFormat */

const UNKNOWN_TITLE = 'svc could not measure this figure (for example, a model without a known price)';
const BUDGET_PERIODS = /** @type {const} */ (['hourly', 'daily', 'monthly']);

/**
 * The value at a dotted path: `pick({a: {b: 1}}, 'a.b')` is 1.
 * @param {unknown} record
 * @param {string} path
 * @returns {unknown}
 */
export function pick(record, path) {
  /** @type {unknown} */
  let value = record;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = /** @type {Record<string, unknown>} */ (value)[key];
  }
  return value;
}

/**
 * Writes every `[attr]` element's figure from `record`. The raw value goes to
 * `data-value` (JSON), the formatted one to the text; unknown reads `unknown`.
 * @param {ParentNode} root
 * @param {string} attr `data-field` or `data-history-field`
 * @param {unknown} record
 */
export function fillFields(root, attr, record) {
  for (const el of root.querySelectorAll(`[${attr}]`)) {
    if (!(el instanceof HTMLElement)) continue;
    const value = pick(record, el.getAttribute(attr) ?? '');
    const text = formatValue(value, /** @type {ValueFormat} */ (el.dataset.format ?? 'int'));
    el.dataset.value = JSON.stringify(value ?? null);
    el.textContent = text ?? 'unknown';
    el.classList.toggle('unknown', text === null);
    if (text === null) el.title = UNKNOWN_TITLE;
    else el.removeAttribute('title');
    // Rows that only matter when something went wrong stay out of the way at 0.
    const optional = el.closest('[data-hide-zero]');
    if (optional instanceof HTMLElement) optional.hidden = !(typeof value === 'number' && value > 0);
  }
}

/**
 * @param {string} tag
 * @param {string} [className]
 * @param {string} [text]
 */
function element(tag, className, text) {
  const el = document.createElement(tag);
  if (className) el.className = className;
  if (text !== undefined) el.textContent = text;
  return el;
}

/**
 * One period's row: spend against limit with a bar, and when it resets.
 * @param {string} period
 * @param {Record<string, unknown>} status
 */
function budgetRow(period, status) {
  const limit = typeof status.limit === 'number' ? status.limit : null;
  const spend = typeof status.spend === 'number' ? status.spend : 0;
  const row = element('li', 'budget-row');
  row.dataset.period = period;
  row.classList.toggle('exceeded', status.exceeded === true);
  const head = element('header');
  head.append(element('span', 'period', period));
  const figures =
    limit === null ? `${formatUsd(spend)} spent · no limit` : `${formatUsd(spend)} of ${formatUsd(limit)}`;
  head.append(element('span', 'figures', status.exceeded === true ? `${figures} · exceeded` : figures));
  row.append(head);
  if (limit !== null) {
    const bar = /** @type {HTMLProgressElement} */ (element('progress'));
    bar.max = limit > 0 ? limit : 1;
    bar.value = Math.min(spend, bar.max);
    bar.setAttribute('aria-label', `${period} budget used`);
    row.append(bar);
  }
  const remaining = typeof status.remaining === 'number' ? ` · ${formatUsd(status.remaining)} left` : '';
  const resets =
    typeof status.resets_at === 'string'
      ? `resets ${status.resets_at.replace('T', ' ').slice(0, 16)} UTC`
      : '';
  row.append(element('div', 'meta', `${resets}${remaining}`));
  return row;
}

/**
 * Renders the `budget` block: a row per period that has a limit or spend.
 * @param {Document} doc
 * @param {unknown} budget
 */
export function renderBudget(doc, budget) {
  const list = /** @type {HTMLElement} */ (doc.getElementById('budget-periods'));
  const note = /** @type {HTMLElement} */ (doc.getElementById('budget-empty'));
  const rows = [];
  let anyLimit = false;
  if (budget && typeof budget === 'object') {
    for (const period of BUDGET_PERIODS) {
      const status = /** @type {Record<string, unknown>} */ (budget)[period];
      if (!status || typeof status !== 'object') continue;
      const s = /** @type {Record<string, unknown>} */ (status);
      if (typeof s.limit === 'number') anyLimit = true;
      rows.push(budgetRow(period, s));
    }
  }
  // Without any limit, spend alone is shown by the cost card; keep the panel short.
  note.hidden = anyLimit;
  list.replaceChildren(...(anyLimit ? rows : []));
}

/** Draws the compression-ratio distribution; redraws only when the counts change. */
export class RatioChart {
  /** @param {Document} doc */
  constructor(doc) {
    this.container = /** @type {HTMLElement} */ (doc.getElementById('ratio-chart'));
    this.empty = /** @type {HTMLElement} */ (doc.getElementById('ratio-empty'));
    /** @type {{ destroy(): void } | undefined} */
    this.chart = undefined;
    this.key = '';
    /** @type {HistogramBin[] | null} */
    this.bins = null;
  }

  /** Redraws with the last counts (after a colour-scheme change). */
  redraw() {
    this.update(this.bins, true);
  }

  /**
   * @param {HistogramBin[] | null} bins null when `/metrics` could not be read
   * @param {boolean} [force] redraw even if unchanged (theme switch)
   */
  update(bins, force = false) {
    this.bins = bins;
    // Ratios are at most 1; drop the empty bins above it so the axis stays readable.
    const shown = (bins ?? []).filter((b) => b.lower < 1 || b.count > 0);
    const total = shown.reduce((sum, b) => sum + b.count, 0);
    const key = JSON.stringify(shown);
    if (key === this.key && !force) return;
    this.key = key;
    this.chart?.destroy();
    this.chart = undefined;
    this.empty.hidden = total > 0;
    this.empty.textContent =
      bins === null ? 'Not available: /metrics could not be read.' : 'No compressed requests yet.';
    this.container.hidden = total === 0;
    if (total === 0) return;
    // Full range labels need about 64 px a bar; below that, upper bounds only.
    const narrow = this.container.clientWidth / shown.length < 64;
    this.chart = barChart(
      this.container,
      shown.map((_, i) => i),
      shown.map((b) => b.count),
      {
        label: 'requests',
        colorVar: '--series-ratio',
        format: (v) => (Number.isInteger(v) ? compactNumber(v) : ''),
        xKind: 'category',
        categories: shown.map((b, i) => binLabel(b, i === 0, narrow)),
        height: 180,
      },
    );
  }
}
