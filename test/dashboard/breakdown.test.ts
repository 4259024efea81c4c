import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Counterfactual } from '../../src/events.js';
import type { StatsRecord } from '../../src/stats/stats-record.js';
import {
  type Browser,
  emitTraffic,
  finishedEvent,
  launchBrowser,
  openDashboard,
  startServer,
  type TestServer,
  waitForPolls,
} from './helpers.js';

// The dashboard's breakdown table (issue 18, item 7) shows /stats `breakdown`, one dimension at a time.

// The page's formatter, loaded by URL because the main tsconfig does not compile JS.
const { formatUsd }: { formatUsd(value: number): string } = await import(
  new URL('../../src/dashboard/assets/format.js', import.meta.url).href
);

const counterfactual: Counterfactual = {
  original: 10_000,
  cachedPrefix: 0,
  firstUsage: { input: 4_000, output: 300, cacheRead: 0, cacheWrite: 0 },
  forwarded: 4_000,
};

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

describe('dashboard breakdown table', () => {
  it('lists projects, and clients after switching, with the numbers of /stats', async () => {
    emitTraffic(svc.server, [
      // alpha's requests carry the inputs of the cache-aware estimate, beta's do not
      finishedEvent({ project: 'alpha', client: 'claude-code', tokensSaved: 600, counterfactual }),
      finishedEvent({ project: 'alpha', client: 'codex', tokensSaved: 300, counterfactual }),
      finishedEvent({ project: 'beta', client: 'openai-sdk', tokensSaved: 100 }),
    ]);
    const { page, problems } = await openDashboard(browser, svc.url);
    await waitForPolls(page, 1);
    const rows = () =>
      page
        .locator('#breakdown-table tbody tr')
        .evaluateAll((trs) => trs.map((tr) => Array.from(tr.children, (c) => c.textContent ?? '')));
    expect(await page.locator('#breakdown-dimension').textContent()).toBe('project');
    const projects = await rows();
    // the cache-aware saving as /stats reports it, and `unknown` (not $0.00) where it was known for no request
    const stats = (await (await fetch(`${svc.url}/stats`)).json()) as StatsRecord;
    const alpha = stats.breakdown!.project.alpha!;
    expect(alpha.cache_aware_requests).toBe(2);
    expect(alpha.cache_aware_savings_usd).not.toBe(0);
    expect(projects.map((r) => [r[0], r[1], r[3], r[6]])).toEqual([
      ['alpha', '2', '900', formatUsd(alpha.cache_aware_savings_usd)],
      ['beta', '1', '100', 'unknown'],
    ]);
    await page.locator('#breakdown-switch label', { hasText: 'Client' }).click();
    expect(await page.locator('#breakdown-dimension').textContent()).toBe('client');
    expect((await rows()).map((r) => r[0]).sort()).toEqual(['claude-code', 'codex', 'openai-sdk']);
    expect(await page.locator('#breakdown-empty').isHidden()).toBe(true);
    expect(problems).toEqual([]);
  });
});
