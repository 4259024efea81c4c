import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startServer, type TestServer, tempHome } from '../stats/helpers.js';

const T = Date.parse('2025-03-31T22:30:00.000Z');
let home: { home: string; cleanup: () => Promise<void> };
let svc: TestServer | undefined;

beforeEach(async () => {
  home = await tempHome();
});
afterEach(async () => {
  await svc?.close();
  svc = undefined;
  await home.cleanup();
});

describe('/stats budget and cache blocks', () => {
  it('shows every period with limit, spend, remaining, reset time and exceeded', async () => {
    svc = await startServer(home.home, { flags: { budget: 5, 'budget-hourly': 1 }, now: () => T });
    const stats = (await (await fetch(`${svc.url}/stats`)).json()) as Record<string, unknown>;
    expect(stats.budget).toEqual({
      enabled: true,
      hourly: {
        limit: 1,
        spend: 0,
        reserved: 0,
        remaining: 1,
        resets_at: '2025-03-31T23:00:00.000Z',
        exceeded: false,
      },
      daily: {
        limit: 5,
        spend: 0,
        reserved: 0,
        remaining: 5,
        resets_at: '2025-04-01T00:00:00.000Z',
        exceeded: false,
      },
      monthly: {
        limit: null,
        spend: 0,
        reserved: 0,
        remaining: null,
        resets_at: '2025-04-01T00:00:00.000Z',
        exceeded: false,
      },
    });
    expect(stats.cache).toMatchObject({ enabled: true, entries: 0, total_hits: 0 });
  });

  it('says budgets are off when no limit is set, and the cache with --no-cache', async () => {
    svc = await startServer(home.home, { flags: { cache: false }, now: () => T });
    const stats = (await (await fetch(`${svc.url}/stats`)).json()) as {
      budget: { enabled: boolean };
      cache: { enabled: boolean };
    };
    expect(stats.budget.enabled).toBe(false);
    expect(stats.cache.enabled).toBe(false);
  });
});
