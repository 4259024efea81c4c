import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Browser,
  emitTraffic,
  launchBrowser,
  openDashboard,
  startServer,
  type TestServer,
  trafficDay,
} from './helpers.js';

let browser: Browser;
let svc: TestServer;

beforeAll(async () => {
  [browser, svc] = await Promise.all([launchBrowser(), startServer()]);
  for (let day = 0; day < 20; day++) emitTraffic(svc.server, trafficDay(day));
});
afterAll(async () => {
  await browser?.close();
  await svc?.close();
});

async function open(width: number, height: number, colorScheme: 'light' | 'dark' = 'light') {
  const opened = await openDashboard(browser, svc.url, '?poll=60000', async (p) => {
    await p.setViewportSize({ width, height });
    await p.emulateMedia({ colorScheme });
  });
  await opened.page.locator('#chart-tokens canvas').waitFor();
  await opened.page.locator('#ratio-chart canvas').waitFor();
  return opened;
}

/** Boxes of the elements matching `selector`, rounded to whole pixels. */
function boxes(page: Page, selector: string) {
  return page.$$eval(selector, (els) =>
    els.map((el) => {
      const r = el.getBoundingClientRect();
      return {
        top: Math.round(r.top),
        left: Math.round(r.left),
        width: Math.round(r.width),
        right: Math.round(r.right),
      };
    }),
  );
}

const background = (page: Page) => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
const chartPixels = (page: Page) =>
  page.$eval('#chart-tokens canvas', (c) => (c as HTMLCanvasElement).toDataURL());

describe('layout', () => {
  it('fits a phone-width screen: no sideways scrolling, two columns of cards, stacked charts', async () => {
    const { page, problems } = await open(390, 844);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    const cards = await boxes(page, '#live .card:not([hidden])');
    expect(cards).toHaveLength(5);
    // The headline figure spans the row; the other four sit two by two.
    expect(cards[0]!.width).toBeGreaterThan(cards[1]!.width * 1.8);
    expect(cards[1]!.top).toBe(cards[2]!.top);
    expect(cards[3]!.top).toBeGreaterThan(cards[1]!.top);
    const figures = await boxes(page, '.chart-figure');
    expect(figures[1]!.top).toBeGreaterThan(figures[0]!.top);
    for (const canvas of await boxes(page, 'canvas')) expect(canvas.right).toBeLessThanOrEqual(390);
    expect(problems).toEqual([]);
  });

  it('uses the width of a wide screen: one row of cards, charts side by side', async () => {
    const { page, problems } = await open(1600, 1000);
    const cards = await boxes(page, '#live .card:not([hidden])');
    expect(new Set(cards.map((c) => c.top)).size).toBe(1);
    const figures = await boxes(page, '.chart-figure');
    expect(figures[0]!.top).toBe(figures[1]!.top);
    expect(figures[1]!.left).toBeGreaterThan(figures[0]!.right);
    // Charts fill their figure rather than keeping a fixed size.
    const canvas = await boxes(page, '#chart-tokens canvas');
    expect(canvas[0]!.width).toBeGreaterThan(figures[0]!.width * 0.85);
    expect(problems).toEqual([]);
  });
});

describe('colour scheme', () => {
  it("follows the system's light or dark preference, also when it changes", async () => {
    const dark = await open(1280, 900, 'dark');
    expect(await background(dark.page)).toBe('rgb(17, 20, 24)');
    const light = await open(1280, 900, 'light');
    expect(await background(light.page)).toBe('rgb(246, 247, 249)');
    const lightPixels = await chartPixels(light.page);

    // Flipping the preference while open recolours the page and redraws the charts.
    await light.page.emulateMedia({ colorScheme: 'dark' });
    await light.page.waitForFunction(
      () => getComputedStyle(document.body).backgroundColor === 'rgb(17, 20, 24)',
    );
    await expect.poll(() => chartPixels(light.page)).not.toBe(lightPixels);
    expect(await chartPixels(light.page)).toBe(await chartPixels(dark.page));
    expect([...dark.problems, ...light.problems]).toEqual([]);
  });
});
