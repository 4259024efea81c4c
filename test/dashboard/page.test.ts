import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type Browser,
  emitTraffic,
  launchBrowser,
  openDashboard,
  pick,
  shownFields,
  startServer,
  type TestServer,
  trafficDay,
  waitForPolls,
} from './helpers.js';

let browser: Browser;
let svc: TestServer;

beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});
beforeEach(async () => {
  svc = await startServer();
});
afterEach(async () => {
  for (const page of browser.context.pages()) await page.close();
  await svc?.close();
});

describe('dashboard in headless chromium', () => {
  it('loads with no console errors and requests nothing outside the server', async () => {
    emitTraffic(svc.server, [...trafficDay(0), ...trafficDay(3)]);
    const { page, problems, requests } = await openDashboard(browser, svc.url);
    await waitForPolls(page, 2);
    await page.locator('#chart-tokens canvas').waitFor();
    expect(problems).toEqual([]);
    const origin = new URL(svc.url).origin;
    expect(requests.length).toBeGreaterThan(5);
    expect(requests.filter((u) => new URL(u).origin !== origin)).toEqual([]);
    // The page is the one svc serves, under its strict policy, and it really ran.
    expect(requests).toContain(`${origin}/dashboard/assets/vendor/uplot.js`);
    expect(await page.locator('#status').textContent()).toMatch(/^Updated /);
  });

  it('shows the same live numbers as /stats after traffic', async () => {
    const { page, problems } = await openDashboard(browser, svc.url);
    await waitForPolls(page, 1);
    expect(await page.locator('[data-field="requests.total"]').getAttribute('data-value')).toBe('0');

    const events = [...trafficDay(0), ...trafficDay(0), ...trafficDay(1)];
    emitTraffic(svc.server, events);
    await page.waitForFunction(
      (n) =>
        document.querySelector<HTMLElement>('[data-field="requests.total"]')?.dataset.value === String(n),
      events.length,
    );
    const stats = await (await fetch(`${svc.url}/stats`)).json();
    const shown = await shownFields(page);
    expect(Object.keys(shown).length).toBeGreaterThanOrEqual(12);
    for (const [path, { value, text }] of Object.entries(shown)) {
      expect(value, path).toEqual(pick(stats, path));
      expect(typeof value, path).toBe('number');
      expect(text, path).not.toBe('unknown');
    }
    // Whole numbers are shown exactly, with separators only.
    for (const path of [
      'requests.total',
      'requests.cached',
      'requests.rate_limited',
      'requests.failed',
      'tokens.input',
      'tokens.output',
      'tokens.saved',
      'cache.total_hits',
    ]) {
      expect(shown[path]?.text.replaceAll(',', ''), path).toBe(String(pick(stats, path)));
    }
    expect(stats.requests.rate_limited).toBeGreaterThan(0);
    expect(stats.requests.failed).toBeGreaterThan(0);
    expect(shown['tokens.savings_percent']?.text).toBe(`${stats.tokens.savings_percent.toFixed(1)}%`);
    expect(shown['cost.total_cost_usd']?.text).toMatch(/^\$\d+\.\d{2,4}$/);
    expect(problems).toEqual([]);
  });
});

describe('dashboard on a fresh install', () => {
  it('shows the empty state instead of empty charts', async () => {
    const { page, problems } = await openDashboard(browser, svc.url);
    await waitForPolls(page, 1);
    await page.locator('#history-empty').waitFor();
    expect(await page.locator('#history-empty').textContent()).toContain('No savings recorded yet');
    expect(await page.locator('#history-charts').isHidden()).toBe(true);
    expect(await page.locator('canvas').count()).toBe(0);
    expect(await page.locator('#ratio-empty').textContent()).toBe('No compressed requests yet.');
    expect(await page.locator('#budget-empty').isVisible()).toBe(true);
    const lifetime = await shownFields(page, 'data-history-field');
    expect(lifetime['lifetime.tokens_saved']).toEqual({ value: 0, text: '0' });
    expect(lifetime['lifetime.compression_savings_usd']).toEqual({ value: 0, text: '$0.00' });
    expect(await page.locator('#error').isHidden()).toBe(true);
    expect(problems).toEqual([]);
  });
});

describe('budget panel', () => {
  it('draws a bar per period with a limit and flags an exceeded one', async () => {
    // The budget guard publishes its state through ctx.budgetStatus; /stats shows it as `budget`.
    const period = (limit: number | null, spend: number, exceeded = false) => ({
      limit,
      spend,
      reserved: 0,
      remaining: limit === null ? null : Math.max(limit - spend, 0),
      resets_at: '2030-01-02T00:00:00.000Z',
      exceeded,
    });
    svc.server.ctx.budgetStatus = () => ({
      enabled: true,
      hourly: period(null, 0.25),
      daily: period(20, 5),
      monthly: period(100, 100.5, true),
    });
    const { page, problems } = await openDashboard(browser, svc.url);
    await page.locator('.budget-row[data-period="daily"]').waitFor();
    expect(await page.locator('#budget-empty').isHidden()).toBe(true);
    const rows = await page.$$eval('.budget-row', (els) =>
      els.map((el) => ({
        period: (el as HTMLElement).dataset.period,
        figures: el.querySelector('.figures')?.textContent,
        bar: el.querySelector('progress')
          ? [
              (el.querySelector('progress') as HTMLProgressElement).value,
              (el.querySelector('progress') as HTMLProgressElement).max,
            ]
          : null,
        exceeded: el.classList.contains('exceeded'),
        meta: el.querySelector('.meta')?.textContent,
      })),
    );
    expect(rows).toEqual([
      {
        period: 'hourly',
        figures: '$0.2500 spent · no limit',
        bar: null,
        exceeded: false,
        meta: 'resets 2030-01-02 00:00 UTC',
      },
      {
        period: 'daily',
        figures: '$5.00 of $20.00',
        bar: [5, 20],
        exceeded: false,
        meta: 'resets 2030-01-02 00:00 UTC · $15.00 left',
      },
      {
        period: 'monthly',
        figures: '$100.50 of $100.00 · exceeded',
        bar: [100, 100],
        exceeded: true,
        meta: 'resets 2030-01-02 00:00 UTC · $0.00 left',
      },
    ]);
    expect(problems).toEqual([]);
  });
});
