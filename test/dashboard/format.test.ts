import { describe, expect, it } from 'vitest';

// The page's own modules are plain ES modules (type-checked by src/dashboard/assets/tsconfig.json);
// these two need no DOM. Loaded by URL because the main tsconfig does not compile JS.
interface HistogramBin {
  lower: number;
  upper: number;
  count: number;
}
const {
  formatInt,
  formatPercent,
  formatPeriod,
  formatUsd,
  formatValue,
}: {
  formatInt(value: number): string;
  formatPercent(value: number): string;
  formatPeriod(iso: string, series: string): string;
  formatUsd(value: number): string;
  formatValue(value: unknown, format: 'int' | 'usd' | 'percent'): string | null;
} = await import(new URL('../../src/dashboard/assets/format.js', import.meta.url).href);
const {
  binLabel,
  histogramBins,
}: {
  binLabel(bin: HistogramBin, first: boolean, narrow?: boolean): string;
  histogramBins(text: string, name: string): HistogramBin[];
} = await import(new URL('../../src/dashboard/assets/metrics.js', import.meta.url).href);

describe('dashboard number formatting', () => {
  it.each([
    [formatInt(1234567), '1,234,567'],
    [formatUsd(0), '$0.00'],
    [formatUsd(0.012345), '$0.0123'],
    [formatUsd(12.5), '$12.50'],
    [formatUsd(1234.567), '$1,234.57'],
    [formatPercent(42.25), '42.3%'],
    [formatPercent(0), '0.0%'],
    [formatPeriod('2025-03-17T00:00:00.000Z', 'weekly'), 'week of 2025-03-17'],
    [formatPeriod('2025-03-01T00:00:00.000Z', 'monthly'), '2025-03'],
    [formatPeriod('2025-03-20T15:00:00.000Z', 'hourly'), '2025-03-20 15:00'],
    [formatPeriod('2025-03-20T00:00:00.000Z', 'daily'), '2025-03-20'],
  ])('%s is %s', (got, want) => {
    expect(got).toBe(want);
  });

  it('shows a figure svc could not measure as unknown, never as 0', () => {
    expect(formatValue(null, 'usd')).toBeNull();
    expect(formatValue(undefined, 'int')).toBeNull();
    expect(formatValue(Number.NaN, 'percent')).toBeNull();
    expect(formatValue(0, 'usd')).toBe('$0.00');
  });
});

describe('compression-ratio histogram from /metrics', () => {
  const text = [
    '# HELP service_compression_ratio Compression ratio',
    '# TYPE service_compression_ratio histogram',
    'service_compression_ratio_bucket{le="0.5",format="chat"} 2',
    'service_compression_ratio_bucket{le="0.9",format="chat"} 5',
    'service_compression_ratio_bucket{le="+Inf",format="chat"} 6',
    'service_compression_ratio_bucket{format="messages",le="0.5"} 1',
    'service_compression_ratio_bucket{format="messages",le="0.9"} 1',
    'service_compression_ratio_bucket{format="messages",le="+Inf"} 1',
    'service_compression_ratio_sum 3.2',
    'service_latency_seconds_bucket{le="0.5"} 99',
  ].join('\n');

  it('turns cumulative buckets into counts per bin, summed over labels', () => {
    expect(histogramBins(text, 'service_compression_ratio')).toEqual([
      { lower: 0, upper: 0.5, count: 3 },
      { lower: 0.5, upper: 0.9, count: 3 },
      { lower: 0.9, upper: Number.POSITIVE_INFINITY, count: 1 },
    ]);
    expect(histogramBins(text, 'service_missing')).toEqual([]);
  });

  it('labels bins for wide and narrow charts', () => {
    const [first, middle, last] = histogramBins(text, 'service_compression_ratio');
    expect([binLabel(first!, true), binLabel(middle!, false), binLabel(last!, false)]).toEqual([
      '≤0.5',
      '0.5–0.9',
      '>0.9',
    ]);
    expect([binLabel(first!, true, true), binLabel(middle!, false, true)]).toEqual(['.5', '.9']);
  });
});
