// @ts-check
/** The live breakdown table: `/stats` `breakdown` by project, model, client or key hash (issue 18, item 7). */
import { formatInt, formatUsd } from './format.js';

/** The dimensions, as the `breakdown` block names them. */
const DIMENSIONS = ['project', 'model', 'client', 'key'];

/** @typedef {{ requests: number, tokens_input: number, tokens_saved: number, cost_usd: number, savings_usd: number, unpriced_requests: number, cache_aware_savings_usd?: number, cache_aware_requests?: number }} Row */

/**
 * @param {string} tag
 * @param {string} text
 */
function cell(tag, text) {
  const el = document.createElement(tag);
  el.textContent = text;
  return el;
}

/**
 * The cache-aware saving of a row (signed), or `unknown` when it was known for
 * no request of the value (or the server is older and does not report it).
 * @param {Row} r
 */
export function cacheAware(r) {
  return typeof r.cache_aware_savings_usd === 'number' && (r.cache_aware_requests ?? 0) > 0
    ? formatUsd(r.cache_aware_savings_usd)
    : 'unknown';
}

/** Renders one dimension of the breakdown; the switch picks which. */
export class BreakdownTable {
  /** @param {Document} doc */
  constructor(doc) {
    this.body = /** @type {HTMLElement} */ (doc.querySelector('#breakdown-table tbody'));
    this.head = /** @type {HTMLElement} */ (doc.getElementById('breakdown-dimension'));
    this.empty = /** @type {HTMLElement} */ (doc.getElementById('breakdown-empty'));
    /** @type {unknown} */
    this.breakdown = undefined;
    this.dimension = 'project';
    for (const input of doc.querySelectorAll('#breakdown-switch input')) {
      input.addEventListener('change', (e) => {
        const value = /** @type {HTMLInputElement} */ (e.target).value;
        if (DIMENSIONS.includes(value)) this.dimension = value;
        this.render();
      });
    }
  }

  /** @param {unknown} breakdown the `/stats` `breakdown` block (absent on an older server) */
  update(breakdown) {
    this.breakdown = breakdown;
    this.render();
  }

  render() {
    const block = /** @type {Record<string, Record<string, Row>> | undefined} */ (
      this.breakdown && typeof this.breakdown === 'object' ? this.breakdown : undefined
    );
    const rows = Object.entries(block?.[this.dimension] ?? {});
    this.head.textContent = this.dimension === 'key' ? 'key (hash)' : this.dimension;
    this.empty.hidden = rows.length > 0;
    this.body.replaceChildren(
      ...rows.map(([value, r]) => {
        const tr = document.createElement('tr');
        tr.dataset.value = value;
        tr.append(
          cell('th', value),
          cell('td', formatInt(r.requests)),
          cell('td', formatInt(r.tokens_input)),
          cell('td', formatInt(r.tokens_saved)),
          cell('td', formatUsd(r.cost_usd)),
          cell('td', formatUsd(r.savings_usd)),
          cell('td', cacheAware(r)),
        );
        tr.firstElementChild?.setAttribute('scope', 'row');
        return tr;
      }),
    );
  }
}
