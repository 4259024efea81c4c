import { describe, expect, it } from 'vitest';
import { historyCsv, parseHistoryExport } from '../../src/stats/history-export.js';
import { buildHistoryRecord, buildSeries } from '../../src/stats/history-record.js';
import { nextPeriodStart, periodStart } from '../../src/stats/periods.js';
import {
  addToDelta,
  applyDelta,
  emptySavings,
  HISTORY_MAX_CHECKPOINTS,
  ROLLUP_RETENTION,
  type SavingsDelta,
} from '../../src/stats/savings-data.js';

const t = (s: string) => Date.parse(s);

describe('UTC periods', () => {
  it('weeks start on Monday, months on the 1st, all in UTC', () => {
    // 2026-03-01 is a Sunday: its week began Monday 2026-02-23.
    expect(new Date(periodStart('weekly', t('2026-03-01T23:59:59Z'))).toISOString()).toBe(
      '2026-02-23T00:00:00.000Z',
    );
    expect(new Date(periodStart('weekly', t('2026-03-02T00:00:00Z'))).toISOString()).toBe(
      '2026-03-02T00:00:00.000Z',
    );
    expect(new Date(periodStart('monthly', t('2026-03-31T23:00:00Z'))).toISOString()).toBe(
      '2026-03-01T00:00:00.000Z',
    );
    expect(new Date(periodStart('daily', t('2026-03-31T23:00:00Z'))).toISOString()).toBe(
      '2026-03-31T00:00:00.000Z',
    );
    expect(new Date(periodStart('hourly', t('2026-03-31T23:59:00Z'))).toISOString()).toBe(
      '2026-03-31T23:00:00.000Z',
    );
    expect(new Date(nextPeriodStart('monthly', t('2026-12-01T00:00:00Z'))).toISOString()).toBe(
      '2027-01-01T00:00:00.000Z',
    );
  });
});

function delta(records: Array<[string, number, number | undefined]>): SavingsDelta {
  const d: SavingsDelta = new Map();
  for (const [time, tokensSaved, savingsUsd] of records)
    addToDelta(d, { time: t(time), tokensSaved, savingsUsd });
  return d;
}

describe('savings data', () => {
  it('adds a delta to lifetime and every rollup, and checkpoints the totals', () => {
    const data = emptySavings(t('2026-03-01T00:00:00Z'));
    applyDelta(
      data,
      delta([
        ['2026-03-01T10:15:00Z', 100, 0.001],
        ['2026-03-01T10:45:00Z', 50, undefined],
        ['2026-03-02T09:00:00Z', 10, 0.0001],
      ]),
      t('2026-03-02T09:00:30Z'),
    );
    expect(data.lifetime).toEqual({
      tokens_saved: 160,
      compression_savings_usd: 0.0011,
      requests: 3,
      unpriced_tokens_saved: 50,
      cli_tokens_saved: 0,
      cli_runs: 0,
      cache_aware_savings_usd: 0,
    });
    expect(data.rollups.hourly['2026-03-01T10:00:00.000Z']).toMatchObject({ tokens_saved: 150, requests: 2 });
    expect(data.rollups.daily['2026-03-01T00:00:00.000Z']?.tokens_saved).toBe(150);
    expect(data.rollups.daily['2026-03-02T00:00:00.000Z']?.tokens_saved).toBe(10);
    // Sunday and Monday fall in different weeks.
    expect(data.rollups.weekly['2026-02-23T00:00:00.000Z']?.tokens_saved).toBe(150);
    expect(data.rollups.weekly['2026-03-02T00:00:00.000Z']?.tokens_saved).toBe(10);
    expect(data.rollups.monthly['2026-03-01T00:00:00.000Z']?.tokens_saved).toBe(160);
    expect(data.history).toEqual([
      { timestamp: '2026-03-02T09:00:30.000Z', total_tokens_saved: 160, compression_savings_usd: 0.0011 },
    ]);
  });

  it('keeps at most one checkpoint per minute and at most HISTORY_MAX_CHECKPOINTS', () => {
    const data = emptySavings(0);
    const start = t('2026-01-01T00:00:00Z');
    applyDelta(data, delta([['2026-01-01T00:00:00Z', 1, 0]]), start + 1000);
    applyDelta(data, delta([['2026-01-01T00:00:00Z', 1, 0]]), start + 30_000);
    expect(data.history).toHaveLength(1);
    expect(data.history[0]).toMatchObject({ timestamp: '2026-01-01T00:00:30.000Z', total_tokens_saved: 2 });
    for (let i = 1; i <= HISTORY_MAX_CHECKPOINTS + 5; i++) {
      applyDelta(data, delta([['2026-01-01T00:00:00Z', 1, 0]]), start + i * 60_000);
    }
    expect(data.history).toHaveLength(HISTORY_MAX_CHECKPOINTS);
    expect(data.history.at(-1)?.total_tokens_saved).toBe(HISTORY_MAX_CHECKPOINTS + 7);
    expect(data.lifetime.tokens_saved).toBe(HISTORY_MAX_CHECKPOINTS + 7);
  });

  it('drops rollup buckets past their retention but keeps lifetime totals', () => {
    const data = emptySavings(0);
    applyDelta(data, delta([['2025-01-01T05:00:00Z', 7, 0.1]]), t('2025-01-01T05:00:00Z'));
    applyDelta(data, delta([['2026-06-01T05:00:00Z', 3, 0.1]]), t('2026-06-01T05:00:00Z'));
    expect(Object.keys(data.rollups.hourly)).toEqual(['2026-06-01T05:00:00.000Z']);
    expect(Object.keys(data.rollups.daily)).toEqual(['2026-06-01T00:00:00.000Z']);
    expect(Object.keys(data.rollups.monthly)).toHaveLength(2);
    expect(data.lifetime.tokens_saved).toBe(10);
    expect(ROLLUP_RETENTION).toEqual({ hourly: 168, daily: 366, weekly: 260, monthly: 120 });
  });
});

describe('rollup series', () => {
  const data = emptySavings(0);
  applyDelta(
    data,
    delta([
      ['2026-03-01T10:15:00Z', 100, 0.25],
      ['2026-03-03T08:00:00Z', 40, 0.1],
    ]),
    t('2026-03-03T08:00:00Z'),
  );
  const now = t('2026-03-04T12:00:00Z');

  it('fills every period from the first bucket to now, with running lifetime totals', () => {
    const daily = buildSeries(data, 'daily', now);
    expect(daily.map((e) => [e.timestamp.slice(0, 10), e.tokens_saved, e.total_tokens_saved])).toEqual([
      ['2026-03-01', 100, 100],
      ['2026-03-02', 0, 100],
      ['2026-03-03', 40, 140],
      ['2026-03-04', 0, 140],
    ]);
    expect(daily[0]).toEqual({
      timestamp: '2026-03-01T00:00:00.000Z',
      period_end: '2026-03-02T00:00:00.000Z',
      tokens_saved: 100,
      compression_savings_usd: 0.25,
      requests: 1,
      unpriced_tokens_saved: 0,
      cli_tokens_saved: 0,
      cli_runs: 0,
      cache_aware_savings_usd: 0,
      total_tokens_saved: 100,
      total_compression_savings_usd: 0.25,
    });
    expect(daily.at(-1)?.total_compression_savings_usd).toBeCloseTo(0.35, 10);
    const weekly = buildSeries(data, 'weekly', now);
    expect(weekly.map((e) => [e.timestamp, e.tokens_saved])).toEqual([
      ['2026-02-23T00:00:00.000Z', 100],
      ['2026-03-02T00:00:00.000Z', 40],
    ]);
    expect(buildSeries(data, 'hourly', now)).toHaveLength(24 * 3 + 3);
  });

  it('builds the whole record with its exports block', () => {
    const record = buildHistoryRecord(data, now);
    expect(record.schema_version).toBe(1);
    expect(record.generated_at).toBe('2026-03-04T12:00:00.000Z');
    expect(record.exports).toEqual({
      default_format: 'json',
      available_formats: ['json', 'csv'],
      available_series: ['history', 'hourly', 'daily', 'weekly', 'monthly'],
      default_series: 'history',
    });
    expect(Object.keys(record.series)).toEqual(['hourly', 'daily', 'weekly', 'monthly']);
    expect(historyCsv(record, 'monthly')).toBe(
      'timestamp,period_end,tokens_saved,compression_savings_usd,requests,unpriced_tokens_saved,total_tokens_saved,total_compression_savings_usd,cli_tokens_saved,cli_runs,cache_aware_savings_usd\n' +
        '2026-03-01T00:00:00.000Z,2026-04-01T00:00:00.000Z,140,0.35,2,0,140,0.35,0,0,0\n',
    );
    expect(historyCsv(buildHistoryRecord(emptySavings(0), now), 'history')).toBe(
      'timestamp,total_tokens_saved,compression_savings_usd\n',
    );
  });

  it.each([
    [{ format: 'xml' }, /format must be one of json, csv/],
    [{ series: 'yearly' }, /series must be one of history, hourly, daily, weekly, monthly/],
    [{ format: ['csv', 'json'] }, /format must be one of/],
  ])('rejects %j', (query, message) => {
    expect(() => parseHistoryExport(query)).toThrow(message);
  });
});

describe('cache-aware USD in the savings file (issue 18 item 3)', () => {
  it('adds signed amounts to lifetime and rollups, without counting a cache-aware-only record as a request', async () => {
    const { parseSavingsData } = await import('../../src/stats/savings-validate.js');
    const d: SavingsDelta = new Map();
    const now = t('2026-03-02T09:00:00Z');
    addToDelta(d, { time: now, tokensSaved: 100, savingsUsd: 0.0003, cacheAwareUsd: 0.002 });
    addToDelta(d, { time: now, tokensSaved: 0, savingsUsd: 0, cacheAwareUsd: -0.005, cacheAwareOnly: true });
    const data = applyDelta(emptySavings(0), d, now);
    expect(data.lifetime).toMatchObject({ tokens_saved: 100, requests: 1, cache_aware_savings_usd: -0.003 });
    expect(data.rollups.daily['2026-03-02T00:00:00.000Z']?.cache_aware_savings_usd).toBe(-0.003);
    // a negative total is a valid file (svc can cost more than it saves)
    const back = parseSavingsData(JSON.parse(JSON.stringify(data)), now);
    expect(back.lifetime.cache_aware_savings_usd).toBe(-0.003);
    // files written before the field read it as 0
    const { cache_aware_savings_usd: _drop, ...old } = data.lifetime;
    expect(parseSavingsData({ ...data, lifetime: old }, now).lifetime.cache_aware_savings_usd).toBe(0);
    expect(buildSeries(data, 'daily', now).at(-1)?.cache_aware_savings_usd).toBe(-0.003);
  });
});
