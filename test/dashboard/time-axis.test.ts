import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type Browser,
  emitTraffic,
  finishedEvent,
  launchBrowser,
  openDashboard,
  startServer,
  type TestServer,
} from './helpers.js';

type Unit = 'hourly' | 'daily' | 'weekly' | 'monthly';
const {
  timeLabels,
  timeRange,
  timeTicks,
}: {
  timeTicks(min: number, max: number, unit: Unit, width: number): { ticks: number[]; stride: number };
  timeLabels(ticks: number[], unit: Unit, stride: number): string[];
  timeRange(xs: number[], unit: Unit): [number, number];
} = await import(new URL('../../src/dashboard/assets/time-axis.js', import.meta.url).href);

const NOW = Date.parse('2025-03-20T15:30:00Z');
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const s = (iso: string) => Date.parse(iso) / 1000;

function axis(xs: number[], unit: Unit, width: number) {
  const [min, max] = timeRange(xs, unit);
  const { ticks, stride } = timeTicks(min, max, unit, width);
  return { ticks, labels: timeLabels(ticks, unit, stride), min, max };
}

describe('time axis ticks and labels', () => {
  it('one point: one period wide, one label naming it', () => {
    const day = axis([s('2025-03-20T00:00:00Z')], 'daily', 600);
    expect(day.max - day.min).toBe(86_400);
    expect(day.labels).toEqual(['Mar 20\n2025']);
    expect(axis([s('2025-03-20T15:00:00Z')], 'hourly', 600).labels).toEqual(['15:00\nMar 20']);
    expect(axis([s('2025-03-01T00:00:00Z')], 'monthly', 600).labels).toEqual(['Mar\n2025']);
  });

  it('one day of hours: hours, thinned to fit, the date where it changes', () => {
    const xs = Array.from({ length: 24 }, (_, h) => s('2025-03-19T16:00:00Z') + h * 3600);
    const wide = axis(xs, 'hourly', 1100);
    expect(wide.labels[0]).toBe('16:00\nMar 19');
    expect(wide.labels).toContain('00:00\nMar 20');
    const narrow = axis(xs, 'hourly', 300);
    expect(narrow.labels.length).toBeLessThanOrEqual(5);
    expect(narrow.labels.every((l) => /^\d\d:00/.test(l))).toBe(true);
  });

  it('a week of days: every day when wide, fewer when narrow', () => {
    const xs = Array.from({ length: 7 }, (_, d) => s('2025-03-14T00:00:00Z') + d * 86_400);
    expect(axis(xs, 'daily', 900).labels).toEqual([
      'Mar 14\n2025',
      'Mar 15',
      'Mar 16',
      'Mar 17',
      'Mar 18',
      'Mar 19',
      'Mar 20',
    ]);
    expect(axis(xs, 'daily', 250).labels.length).toBeLessThanOrEqual(4);
  });

  it('years of months: months or years, never outside the data', () => {
    const xs: number[] = [];
    for (let m = 0; m < 40; m++) xs.push(Date.UTC(2022, m, 1) / 1000);
    const wide = axis(xs, 'monthly', 1100);
    const narrow = axis(xs, 'monthly', 300);
    expect(narrow.labels).toEqual(['2022', '2023', '2024', '2025']);
    expect(wide.labels[0]).toMatch(/^Jan\n2022$/);
    for (const a of [wide, narrow]) for (const t of a.ticks) expect(t >= a.min && t <= a.max).toBe(true);
  });
});

describe('dashboard history chart axis (browser)', () => {
  let browser: Browser;
  let svc: TestServer | undefined;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });
  afterEach(async () => {
    for (const page of browser.context.pages()) await page.close();
    await svc?.close();
    svc = undefined;
  });

  async function labels(page: Page, series: string): Promise<string[]> {
    // Always click: the page remembers the last series picked (in this browser profile).
    await page.getByRole('radio', { name: `${series[0]?.toUpperCase()}${series.slice(1)}` }).check();
    await page.waitForFunction(
      (n) => document.querySelector<HTMLElement>('#history-charts')?.dataset.series === n,
      series,
    );
    await page.waitForFunction(
      () => document.querySelector<HTMLElement>('#chart-tokens')?.dataset.xLabels !== undefined,
    );
    return (
      await page.evaluate(() => document.querySelector<HTMLElement>('#chart-tokens')?.dataset.xLabels ?? '')
    ).split('|');
  }

  async function withHistory(times: number[]): Promise<Page> {
    svc = await startServer({ now: () => NOW });
    emitTraffic(
      svc.server,
      times.map((t) => finishedEvent({ time: new Date(t) })),
    );
    await svc.server.ctx.savings?.flush();
    const { page, problems } = await openDashboard(browser, svc.url);
    await page.locator('#chart-tokens canvas').waitFor();
    expect(problems).toEqual([]);
    return page;
  }

  it('one point: the day itself, no axis of years', async () => {
    const page = await withHistory([NOW]);
    expect(await labels(page, 'daily')).toEqual(['Mar 20 2025']);
    expect(await labels(page, 'monthly')).toEqual(['Mar 2025']);
  }, 60_000);

  it('one day: hours of that day', async () => {
    const page = await withHistory(Array.from({ length: 24 }, (_, h) => NOW - h * HOUR));
    const hours = await labels(page, 'hourly');
    expect(hours.length).toBeGreaterThan(3);
    expect(hours.every((l) => /^\d\d:00( Mar (19|20))?$/.test(l))).toBe(true);
    expect(await labels(page, 'daily')).toEqual(['Mar 19 2025', 'Mar 20']);
  }, 60_000);

  it('one week: its days', async () => {
    const page = await withHistory(Array.from({ length: 7 }, (_, d) => NOW - d * DAY));
    expect(await labels(page, 'daily')).toEqual([
      'Mar 14 2025',
      'Mar 15',
      'Mar 16',
      'Mar 17',
      'Mar 18',
      'Mar 19',
      'Mar 20',
    ]);
  }, 60_000);

  it('years: months or years within the data', async () => {
    const times: number[] = [];
    for (let d = 0; d < 3 * 365; d += 5) times.push(NOW - d * DAY);
    const page = await withHistory(times);
    const months = await labels(page, 'monthly');
    const years = months.map((l) => /\b(20\d\d)\b/.exec(l)?.[1]).filter(Boolean);
    expect(years.length).toBeGreaterThan(0);
    for (const y of years) expect(['2022', '2023', '2024', '2025']).toContain(y);
  }, 60_000);
});
