import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
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
      finishedEvent({ project: 'alpha', client: 'claude-code', tokensSaved: 600 }),
      finishedEvent({ project: 'alpha', client: 'codex', tokensSaved: 300 }),
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
    expect(projects.map((r) => [r[0], r[1], r[3]])).toEqual([
      ['alpha', '2', '900'],
      ['beta', '1', '100'],
    ]);
    await page.locator('#breakdown-switch label', { hasText: 'Client' }).click();
    expect(await page.locator('#breakdown-dimension').textContent()).toBe('client');
    expect((await rows()).map((r) => r[0]).sort()).toEqual(['claude-code', 'codex', 'openai-sdk']);
    expect(await page.locator('#breakdown-empty').isHidden()).toBe(true);
    expect(problems).toEqual([]);
  });
});
