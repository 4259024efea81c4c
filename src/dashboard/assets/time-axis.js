// @ts-check
/**
 * Ticks and labels of the history charts' time axis. The x values are the
 * UTC starts of the series' periods (seconds); ticks fall on period starts
 * aligned to the calendar (midnight, Mondays, January, every 6 hours ...),
 * as many as fit the width, and labels say what a reader needs at that
 * density: `14:00`, `Mar 20`, `Mar 2025`, `2025`. The range always spans at
 * least one period, so one point is one bar with one label, never an axis
 * of years.
 */

/** @typedef {'hourly' | 'daily' | 'weekly' | 'monthly'} TimeUnit */

const HOUR = 3600;
const DAY = 24 * HOUR;

/** Strides (in periods) tried in order, smallest first, per unit. */
const STRIDES = /** @type {Record<TimeUnit, number[]>} */ ({
  hourly: [1, 2, 3, 6, 12, 24, 48, 168, 336],
  daily: [1, 2, 7, 14, 28, 91, 182, 364],
  weekly: [1, 2, 4, 8, 13, 26, 52, 104],
  monthly: [1, 2, 3, 6, 12, 24, 60, 120],
});

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/**
 * Start of the period after `t` (seconds, UTC).
 * @param {number} t
 * @param {TimeUnit} unit
 */
export function nextPeriod(t, unit) {
  if (unit === 'hourly') return t + HOUR;
  if (unit === 'daily') return t + DAY;
  if (unit === 'weekly') return t + 7 * DAY;
  const d = new Date(t * 1000);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) / 1000;
}

/**
 * Start of the period holding `t`.
 * @param {number} t
 * @param {TimeUnit} unit
 */
export function periodStart(t, unit) {
  const d = new Date(t * 1000);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  if (unit === 'monthly') return Date.UTC(y, m, 1) / 1000;
  if (unit === 'hourly') return Math.floor(t / HOUR) * HOUR;
  const day = Date.UTC(y, m, d.getUTCDate()) / 1000;
  if (unit === 'daily') return day;
  return day - ((d.getUTCDay() + 6) % 7) * DAY; // weeks start Monday
}

/**
 * The x range drawn: the first period's start to the last period's end, so
 * every bar (centred on its period) is whole, and one point is one period wide.
 * @param {number[]} xs period starts, ascending
 * @param {TimeUnit} unit
 * @returns {[number, number]}
 */
export function timeRange(xs, unit) {
  const first = xs[0] ?? 0;
  const last = xs.at(-1) ?? first;
  const half = (nextPeriod(last, unit) - last) / 2;
  return [first - half, last + half];
}

/**
 * Whether the period starting at `t` is a tick at this stride (calendar-aligned).
 * @param {number} t
 * @param {TimeUnit} unit
 * @param {number} stride
 */
function aligned(t, unit, stride) {
  const d = new Date(t * 1000);
  if (stride === 1) return true;
  if (unit === 'hourly') {
    const h = d.getUTCHours();
    if (stride < 24) return h % stride === 0;
    const day = Math.round((t - h * HOUR) / DAY);
    const monday = d.getUTCDay() === 1;
    if (h !== 0) return false;
    if (stride === 24) return true;
    if (stride === 48) return day % 2 === 0;
    return monday && (stride === 168 || Math.floor((day - 4) / 7) % 2 === 0);
  }
  if (unit === 'daily') {
    if (stride === 7) return d.getUTCDay() === 1;
    if (stride === 14) return d.getUTCDay() === 1 && Math.floor(Math.round(t / DAY) / 7) % 2 === 0;
    if (stride >= 28) {
      const months = stride === 28 ? 1 : stride === 91 ? 3 : stride === 182 ? 6 : 12;
      return d.getUTCDate() === 1 && d.getUTCMonth() % months === 0;
    }
    return Math.round(t / DAY) % stride === 0;
  }
  if (unit === 'weekly') {
    const week = Math.round((t - 4 * DAY) / (7 * DAY)); // 1970-01-05 was a Monday
    return week % stride === 0;
  }
  const month = d.getUTCFullYear() * 12 + d.getUTCMonth();
  return month % stride === 0;
}

/**
 * Tick positions: calendar-aligned period starts between `min` and `max`,
 * at the smallest stride that leaves `minSpacing` pixels between labels.
 * @param {number} min scale minimum (seconds)
 * @param {number} max scale maximum (seconds)
 * @param {TimeUnit} unit
 * @param {number} widthPx plot width in CSS pixels
 * @param {number} [minSpacing]
 * @returns {{ ticks: number[], stride: number }}
 */
export function timeTicks(min, max, unit, widthPx, minSpacing = 64) {
  /** @type {number[]} */
  const periods = [];
  let t = periodStart(min, unit);
  if (t < min) t = nextPeriod(t, unit);
  for (let guard = 0; t <= max && guard < 100_000; guard++) {
    periods.push(t);
    t = nextPeriod(t, unit);
  }
  const strides = STRIDES[unit];
  const span = Math.max(max - min, 1);
  for (const stride of strides) {
    const ticks = periods.filter((p) => aligned(p, unit, stride));
    if (ticks.length <= 1) return { ticks: ticks.length ? ticks : periods.slice(0, 1), stride };
    // The narrowest gap between neighbouring ticks, in pixels.
    let gap = Number.POSITIVE_INFINITY;
    for (let i = 1; i < ticks.length; i++)
      gap = Math.min(gap, ((ticks[i] ?? 0) - (ticks[i - 1] ?? 0)) / span);
    if (gap * widthPx >= minSpacing) return { ticks, stride };
  }
  const stride = strides.at(-1) ?? 1;
  // Decades of history: one tick per N years, whatever fits.
  const years = periods.filter((p) => aligned(p, unit, stride));
  const keep = Math.max(1, Math.ceil((years.length * minSpacing) / widthPx));
  return { ticks: years.filter((_, i) => i % keep === 0), stride: stride * keep };
}

/**
 * Labels of the ticks: the finest field the stride needs, with the larger
 * field (day, year) added on a second line where it changes or on the first tick.
 * @param {number[]} ticks
 * @param {TimeUnit} unit
 * @param {number} stride
 * @returns {string[]}
 */
export function timeLabels(ticks, unit, stride) {
  /** @type {string | undefined} */
  let previousContext;
  return ticks.map((t) => {
    const d = new Date(t * 1000);
    const year = String(d.getUTCFullYear());
    const dayMonth = `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}`;
    /** @type {string} */
    let main;
    /** @type {string} */
    let context;
    if (unit === 'hourly' && stride < 24) {
      main = `${String(d.getUTCHours()).padStart(2, '0')}:00`;
      context = dayMonth;
    } else if (
      unit === 'monthly' ||
      (unit === 'daily' && stride >= 28) ||
      (unit === 'weekly' && stride >= 4)
    ) {
      const monthsPerTick =
        unit === 'monthly' ? stride : unit === 'daily' ? Math.round(stride / 30) : Math.round(stride / 4.33);
      if (monthsPerTick >= 12 && d.getUTCMonth() === 0) return year;
      main = MONTHS[d.getUTCMonth()] ?? '';
      context = year;
    } else {
      main = dayMonth;
      context = year;
    }
    const label = context !== previousContext ? `${main}\n${context}` : main;
    previousContext = context;
    return label;
  });
}
