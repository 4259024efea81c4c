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
  emitTraffic(svc.server, [...trafficDay(0), ...trafficDay(2)]);
});
afterEach(async () => {
  for (const page of browser.context.pages()) await page.close();
  await svc?.close();
});

/** What Chromium itself logs for a response with an error status, which these tests cause on purpose. */
const expectedFailure = (line: string) =>
  /Failed to load resource: the server responded with a status of 500/.test(line);

describe('dashboard when svc fails', () => {
  it('shows a 500 from /stats and /stats-history plainly, without charts', async () => {
    const { page, problems } = await openDashboard(browser, svc.url, '?poll=250', async (p) => {
      // svc answering with its own error shape; the rest of the page is the real server's.
      const body = JSON.stringify({
        error: { message: 'savings store unavailable', type: 'internal_error' },
      });
      await p.route(/\/stats(-history)?$/, (route) =>
        route.fulfill({ status: 500, contentType: 'application/json', body }),
      );
    });
    await page.locator('#error').waitFor();
    await waitForPolls(page, 2);
    expect(await page.locator('#error-title').textContent()).toBe('svc answered with an error.');
    expect(await page.locator('#error-detail').textContent()).toContain(
      'stats answered 500: savings store unavailable',
    );
    expect(await page.locator('#history-error').textContent()).toContain(
      'stats-history answered 500: savings store unavailable',
    );
    expect(await page.locator('#history-charts').isHidden()).toBe(true);
    expect(await page.locator('#history-empty').isHidden()).toBe(true);
    expect(await page.locator('#history-charts canvas').count()).toBe(0);
    expect(await page.locator('[data-field="requests.total"]').textContent()).toBe('–');
    expect(await page.locator('#status').textContent()).toBe('No data yet');
    expect(problems.filter((p) => !expectedFailure(p))).toEqual([]);
  });

  it('says svc is not answering when the server stops, keeping the last figures', async () => {
    const { page } = await openDashboard(browser, svc.url, '?poll=250');
    await page.locator('#chart-tokens canvas').waitFor();
    await waitForPolls(page, 1);
    const total = await page.locator('[data-field="requests.total"]').textContent();
    await svc.close();
    await page.locator('#error').waitFor();
    expect(await page.locator('#error-title').textContent()).toBe('svc is not answering.');
    expect(await page.locator('#error-detail').textContent()).toMatch(
      /stats: svc did not answer .*Retrying every 1 s\./,
    );
    expect(await page.locator('#status').textContent()).toMatch(/^Last updated .* \(stale\)$/);
    expect(await page.locator('#live').getAttribute('class')).toContain('stale-data');
    expect(await page.locator('[data-field="requests.total"]').textContent()).toBe(total);
    // The history drawn before the outage stays, not replaced by a broken chart.
    expect(await page.locator('#chart-tokens canvas').count()).toBe(1);
  });
});

/** Fetches of `/stats` the page has started (counted synchronously, inside the page). */
const statsCalls = (page: Page) =>
  page.evaluate(() => (window as unknown as { statsCalls: number }).statsCalls);

/** Makes the page believe its tab was hidden or shown, as the browser reports it. */
async function setVisibility(page: Page, state: 'hidden' | 'visible') {
  await page.evaluate((s) => {
    Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => s });
    Object.defineProperty(document, 'hidden', { configurable: true, get: () => s === 'hidden' });
    document.dispatchEvent(new Event('visibilitychange'));
  }, state);
}

const START = Date.parse('2025-03-20T15:30:00Z');

describe('polling', () => {
  it('polls every 5 s by default and pauses while the tab is hidden', async () => {
    const { page, problems } = await openDashboard(browser, svc.url, '', async (p) => {
      // Page time stands still unless the test moves it.
      await p.clock.install({ time: START });
      await p.clock.pauseAt(START + 1_000);
      await p.addInitScript(() => {
        const w = window as unknown as { statsCalls: number };
        w.statsCalls = 0;
        const original = window.fetch.bind(window);
        window.fetch = (input, init) => {
          if (String(input) === 'stats') w.statsCalls += 1;
          return original(input, init);
        };
      });
    });
    await waitForPolls(page, 1);
    expect(await statsCalls(page)).toBe(1);
    expect(await page.locator('#poll-seconds').textContent()).toBe('5');

    await page.clock.runFor(4_900);
    expect(await statsCalls(page)).toBe(1);
    await page.clock.runFor(200);
    expect(await statsCalls(page)).toBe(2);
    await waitForPolls(page, 2);

    await setVisibility(page, 'hidden');
    expect(await page.locator('#status').textContent()).toBe('Paused while this tab is hidden');
    await page.clock.runFor(60_000);
    expect(await statsCalls(page)).toBe(2);

    // Back in view: refresh at once, then every 5 s again.
    await setVisibility(page, 'visible');
    expect(await statsCalls(page)).toBe(3);
    await waitForPolls(page, 3);
    await page.clock.runFor(5_100);
    expect(await statsCalls(page)).toBe(4);
    expect(problems).toEqual([]);
  });
});
