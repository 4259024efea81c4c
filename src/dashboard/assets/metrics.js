// @ts-check
/** Reads one histogram out of svc's `/metrics` text (Prometheus exposition format). */

/**
 * @typedef {object} HistogramBin
 * @property {number} lower exclusive lower bound (0 for the first bin)
 * @property {number} upper inclusive upper bound (Infinity for the last)
 * @property {number} count observations in (lower, upper]
 */

const BUCKET_LINE = /^(\w+)_bucket\{([^}]*)\}\s+(\S+)/;
const LE_LABEL = /(?:^|,)\s*le="([^"]+)"/;

/**
 * The bins of histogram `name`, summed over its other labels, as counts per
 * bin (Prometheus buckets are cumulative). Empty when the histogram is absent.
 * @param {string} text
 * @param {string} name
 * @returns {HistogramBin[]}
 */
export function histogramBins(text, name) {
  /** @type {Map<number, number>} */
  const cumulative = new Map();
  for (const line of text.split('\n')) {
    const m = BUCKET_LINE.exec(line);
    if (!m || m[1] !== name) continue;
    const le = LE_LABEL.exec(m[2] ?? '');
    if (!le) continue;
    const bound = le[1] === '+Inf' ? Number.POSITIVE_INFINITY : Number(le[1]);
    const count = Number(m[3]);
    if (Number.isNaN(bound) || !Number.isFinite(count)) continue;
    cumulative.set(bound, (cumulative.get(bound) ?? 0) + count);
  }
  const bounds = [...cumulative.keys()].sort((a, b) => a - b);
  let previous = 0;
  let lower = 0;
  return bounds.map((upper) => {
    const total = cumulative.get(upper) ?? 0;
    const bin = { lower, upper, count: Math.max(total - previous, 0) };
    previous = total;
    lower = upper;
    return bin;
  });
}

/**
 * A short label for a bin: `≤0.1`, `0.1–0.2`, `>1`. `narrow` keeps only the
 * upper bound without its leading zero (`.2`) so ten bins fit a phone.
 * @param {HistogramBin} bin
 * @param {boolean} first
 * @param {boolean} [narrow]
 */
export function binLabel(bin, first, narrow = false) {
  if (bin.upper === Number.POSITIVE_INFINITY) return `>${bin.lower}`;
  if (narrow) return String(bin.upper).replace(/^0\./, '.');
  return first ? `≤${bin.upper}` : `${bin.lower}–${bin.upper}`;
}
