// @ts-check
/** Bar charts drawn by uPlot (served by svc from its npm package), themed from the page's CSS variables. */
import { timeLabels, timeRange, timeTicks } from './time-axis.js';
import uPlot from './vendor/uplot.js';

/**
 * @typedef {object} BarChartOptions
 * @property {string} label series name in the legend
 * @property {string} colorVar CSS variable holding the bar colour, e.g. `--series-tokens`
 * @property {(value: number) => string} format how a y value reads in the legend
 * @property {(value: number) => string} [formatAxis] how a y tick reads (default `format`)
 * @property {'time' | 'category'} xKind `time`: x are UTC seconds; `category`: x are indexes into `categories`
 * @property {string[]} [categories]
 * @property {(seconds: number) => string} [formatTime] legend label of a time x
 * @property {import('./time-axis.js').TimeUnit} [timeUnit] the period of a time x: ticks and range follow it
 * @property {number} [height]
 */

/** @param {string} name */
function cssVar(name) {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
}

/**
 * Short axis labels: `1.2k`, `3.4M`.
 * @param {number} value
 */
export function compactNumber(value) {
  return new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 }).format(value);
}

const COMPACT_USD = new Intl.NumberFormat('en-US', {
  style: 'currency',
  currency: 'USD',
  notation: 'compact',
  maximumSignificantDigits: 3,
});

/**
 * Short dollar ticks: `$0.6`, `$1.2K`.
 * @param {number} value
 */
export function compactUsd(value) {
  return COMPACT_USD.format(value);
}

/**
 * A bar chart in `container`, drawn now and redrawn to fit its width when the
 * container resizes. `container.dataset.points` holds the number of bars drawn.
 * @param {HTMLElement} container
 * @param {number[]} xs
 * @param {number[]} ys
 * @param {BarChartOptions} options
 * @returns {{ destroy(): void }}
 */
export function barChart(container, xs, ys, options) {
  const text = cssVar('--muted');
  const grid = cssVar('--grid');
  const color = cssVar(options.colorVar);
  const height = options.height ?? 220;
  const categories = options.categories ?? [];
  const formatTime = options.xKind === 'time' ? options.formatTime : undefined;
  /** @type {uPlot.Axis} */
  const axisStyle = { stroke: text, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
  const unit = options.xKind === 'time' ? options.timeUnit : undefined;
  const Y_AXIS = 64;
  let stride = 1;
  /** @type {uPlot.Axis} */
  const timeAxis = unit
    ? {
        ...axisStyle,
        size: 52,
        // Period starts aligned to the calendar, as many as fit; labels as fine as the spacing needs.
        splits: (u, _axis, min, max) => {
          const found = timeTicks(min, max, unit, Math.max(u.width - Y_AXIS, 50));
          stride = found.stride;
          return found.ticks;
        },
        values: (_u, splits) => {
          const labels = timeLabels(splits, unit, stride);
          // What the axis reads, for tests and tools (the canvas itself has no text).
          container.dataset.xLabels = labels.map((l) => l.replace('\n', ' ')).join('|');
          return labels;
        },
      }
    : axisStyle;
  /** @type {uPlot.Options} */
  const opts = {
    width: Math.max(container.clientWidth, 200),
    height,
    // Periods are UTC (weeks start Monday, UTC); show them as such whatever the browser's zone.
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1e3), 'Etc/UTC'),
    cursor: { drag: { x: false, y: false }, points: { show: false } },
    legend: { show: options.xKind === 'time' },
    scales: {
      x:
        options.xKind === 'time'
          ? unit
            ? { time: true, range: () => timeRange(xs, unit) }
            : { time: true }
          : { time: false, range: [-0.5, Math.max(categories.length - 0.5, 0.5)] },
      y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] },
    },
    axes: [
      options.xKind === 'time'
        ? timeAxis
        : {
            ...axisStyle,
            splits: () => categories.map((_, i) => i),
            values: (_u, splits) => splits.map((i) => categories[i] ?? ''),
          },
      {
        ...axisStyle,
        size: Y_AXIS,
        values: (_u, splits) => splits.map((v) => (options.formatAxis ?? options.format)(v)),
      },
    ],
    series: [
      // With no bar hovered the legend reads the latest period rather than dashes.
      formatTime ? { label: 'period', value: (u, v) => formatTime(v ?? u.data[0].at(-1) ?? 0) } : {},
      {
        label: options.label,
        stroke: color,
        fill: color,
        width: 0,
        paths: uPlot.paths.bars?.({ size: [0.7, 48, 2], align: 0 }),
        points: { show: false },
        value: (u, v) => options.format(v ?? u.data[1]?.at(-1) ?? 0),
      },
    ],
  };
  container.replaceChildren();
  const plot = new uPlot(opts, [xs, ys], container);
  container.dataset.points = String(xs.length);

  let frame = 0;
  const observer = new ResizeObserver(() => {
    cancelAnimationFrame(frame);
    frame = requestAnimationFrame(() => {
      const width = Math.max(container.clientWidth, 200);
      if (width !== plot.width) plot.setSize({ width, height });
    });
  });
  observer.observe(container);
  return {
    destroy() {
      observer.disconnect();
      cancelAnimationFrame(frame);
      plot.destroy();
      container.replaceChildren();
      delete container.dataset.points;
      delete container.dataset.xLabels;
    },
  };
}
