import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type Browser,
  emitTraffic,
  launchBrowser,
  openDashboard,
  startServer,
  type TestServer,
  trafficDay,
} from './helpers.js';

// A fixed clock makes `/stats-history` byte-stable (its `generated_at` is "now").
const NOW = Date.parse('2025-03-20T15:30:00Z');

let browser: Browser;
let svc: TestServer;
let record: { series: Record<string, unknown[]> };

beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});
beforeEach(async () => {
  svc = await startServer({ now: () => NOW });
  // Seventy days of traffic: every series has a different number of periods.
  for (let day = 0; day < 70; day++) emitTraffic(svc.server, trafficDay(day, NOW));
  // Settle the savings file now rather than in the middle of a comparison: a
  // `/stats-history` read while the stats part's coalesced flush is finishing
  // can count the flushed savings twice (a stats bug, reported).
  await svc.server.ctx.savings?.flush();
  record = await (await fetch(`${svc.url}/stats-history`)).json();
});
afterEach(async () => {
  for (const page of browser.context.pages()) await page.close();
  await svc?.close();
});

async function chartState(page: Page) {
  return page.evaluate(() => ({
    series: document.querySelector<HTMLElement>('#history-charts')?.dataset.series,
    points: document.querySelector<HTMLElement>('#chart-tokens')?.dataset.points,
    usdPoints: document.querySelector<HTMLElement>('#chart-usd')?.dataset.points,
    pixels: document.querySelector<HTMLCanvasElement>('#chart-tokens canvas')?.toDataURL(),
    rows: document.querySelectorAll('#history-table tbody tr').length,
    caption: document.querySelector('#history-charts figcaption')?.textContent,
  }));
}

describe('historical view', () => {
  it('redraws the charts when the series is switched', async () => {
    const lengths = Object.fromEntries(Object.entries(record.series).map(([k, v]) => [k, v.length]));
    // The four series really differ, so a redraw is visible.
    expect(new Set(Object.values(lengths)).size).toBe(4);
    const { page, problems } = await openDashboard(browser, svc.url);
    await page.locator('#chart-tokens canvas').waitFor();
    const daily = await chartState(page);
    expect(daily).toMatchObject({ series: 'daily', points: String(lengths.daily), rows: lengths.daily });
    expect(daily.caption).toBe('Tokens saved per day');

    let previous = daily.pixels;
    for (const [label, name, word] of [
      ['Weekly', 'weekly', 'week'],
      ['Monthly', 'monthly', 'month'],
      ['Hourly', 'hourly', 'hour'],
      ['Daily', 'daily', 'day'],
    ] as const) {
      await page.getByRole('radio', { name: label }).check();
      await page.waitForFunction(
        (n) => document.querySelector<HTMLElement>('#chart-tokens')?.dataset.points === n,
        String(lengths[name]),
      );
      const state = await chartState(page);
      expect(state).toMatchObject({
        series: name,
        points: String(lengths[name]),
        usdPoints: String(lengths[name]),
        rows: lengths[name],
      });
      expect(state.caption).toBe(`Tokens saved per ${word}`);
      expect(state.pixels).not.toBe(previous);
      previous = state.pixels;
    }
    expect(problems).toEqual([]);
  });

  it('downloads exactly what /stats-history serves, as JSON and as CSV', async () => {
    const { page, problems } = await openDashboard(browser, svc.url);
    await page.locator('#chart-tokens canvas').waitFor();
    for (const [label, series] of [
      ['Weekly', 'weekly'],
      ['Daily', 'daily'],
    ] as const) {
      await page.getByRole('radio', { name: label }).check();
      for (const format of ['json', 'csv'] as const) {
        const [download] = await Promise.all([
          page.waitForEvent('download'),
          page.click(`#export-${format}`),
        ]);
        const downloaded = await readFile((await download.path())!, 'utf8');
        const served = await fetch(`${svc.url}/stats-history?format=${format}&series=${series}`);
        expect(served.status).toBe(200);
        expect(downloaded).toBe(await served.text());
        expect(download.url()).toBe(`${svc.url}/stats-history?format=${format}&series=${series}`);
        if (format === 'csv') {
          expect(download.suggestedFilename()).toContain(series);
          const lines = downloaded.trim().split('\n');
          expect(lines[0]).toMatch(/^timestamp,/);
          expect(lines).toHaveLength(record.series[series]!.length + 1);
        } else {
          expect(JSON.parse(downloaded).series[series]).toEqual(record.series[series]);
        }
      }
    }
    expect(problems).toEqual([]);
  });
});
