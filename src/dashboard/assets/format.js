// @ts-check
/** Number and time formatting shared by the dashboard's views. */

const INT = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const PERCENT = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1, minimumFractionDigits: 1 });

/**
 * Whole numbers with thousands separators: `formatInt(12345)` is `12,345`.
 * @param {number} value
 */
export function formatInt(value) {
  return INT.format(value);
}

/**
 * US dollars. Costs per request are small, so amounts under a dollar keep four
 * decimals: `formatUsd(0.01234)` is `$0.0123`, `formatUsd(12.5)` is `$12.50`.
 * @param {number} value
 */
export function formatUsd(value) {
  const digits = Math.abs(value) >= 1 || value === 0 ? 2 : 4;
  const abs = Math.abs(value).toLocaleString('en-US', {
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  });
  // a negative saving keeps its sign in front: -$0.0031
  return `${value < 0 ? '-' : ''}$${abs}`;
}

/**
 * A percentage that is already scaled to 0..100: `formatPercent(42.25)` is `42.3%`.
 * @param {number} value
 */
export function formatPercent(value) {
  return `${PERCENT.format(value)}%`;
}

/** @typedef {'int' | 'usd' | 'percent'} ValueFormat */

/**
 * Formats a value from a stats record; `null` (a figure svc could not measure,
 * such as the cost of an unknown model) becomes `unknown`, never 0.
 * @param {unknown} value
 * @param {ValueFormat} format
 * @returns {string | null} null when the value is unknown
 */
export function formatValue(value, format) {
  if (typeof value !== 'number' || !Number.isFinite(value)) return null;
  if (format === 'usd') return formatUsd(value);
  if (format === 'percent') return formatPercent(value);
  return formatInt(value);
}

/** @typedef {'history' | 'hourly' | 'daily' | 'weekly' | 'monthly'} SeriesName */

/**
 * Label of a period that starts at `iso` (UTC), as wide as the period.
 * @param {string} iso
 * @param {SeriesName} series
 */
export function formatPeriod(iso, series) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const date = d.toISOString().slice(0, 10);
  if (series === 'monthly') return date.slice(0, 7);
  if (series === 'weekly') return `week of ${date}`;
  if (series === 'daily') return date;
  return `${date} ${d.toISOString().slice(11, 16)}`;
}

/**
 * Local wall-clock time of the last refresh, `14:03:07`.
 * @param {Date} date
 */
export function formatClock(date) {
  return date.toLocaleTimeString('en-GB', { hour12: false });
}
