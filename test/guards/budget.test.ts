import { describe, expect, it } from 'vitest';
import { budgetStateLines, createMemoryBudget } from '../../src/guards/budget.js';
import { type BudgetPeriod, periodEnd, periodStart } from '../../src/guards/budget-periods.js';
import type { Logger } from '../../src/log.js';

const T = Date.parse('2025-03-31T22:30:00.000Z');

function recordingLogger() {
  const lines: string[] = [];
  const push = (level: string) => (m: string) => lines.push(`${level} ${m}`);
  const logger: Logger = {
    error: push('error'),
    warn: push('warn'),
    info: push('info'),
    debug: push('debug'),
  };
  return { lines, logger };
}

describe('budget periods', () => {
  it.each([
    ['hourly', '2025-03-31T22:00:00.000Z', '2025-03-31T23:00:00.000Z'],
    ['daily', '2025-03-31T00:00:00.000Z', '2025-04-01T00:00:00.000Z'],
    ['monthly', '2025-03-01T00:00:00.000Z', '2025-04-01T00:00:00.000Z'],
  ] as const)('%s windows are UTC calendar windows', (period, start, end) => {
    expect(new Date(periodStart(period, T)).toISOString()).toBe(start);
    expect(new Date(periodEnd(period, T)).toISOString()).toBe(end);
  });

  it('handles year ends and leap days', () => {
    const newYearsEve = Date.parse('2024-12-31T23:59:59.999Z');
    expect(new Date(periodEnd('monthly', newYearsEve)).toISOString()).toBe('2025-01-01T00:00:00.000Z');
    expect(new Date(periodEnd('daily', Date.parse('2024-02-28T12:00:00Z'))).toISOString()).toBe(
      '2024-02-29T00:00:00.000Z',
    );
    expect(periodStart('hourly', Date.parse('2025-01-01T00:00:00Z'))).toBe(
      Date.parse('2025-01-01T00:00:00Z'),
    );
  });
});

describe('memory budget', () => {
  it('refuses once spend reaches the limit, naming period, limit, spend and reset', async () => {
    const budget = createMemoryBudget({ limits: { daily: 1 }, now: () => T });
    const a = await budget.reserve(0.6);
    if (!a.allowed) throw new Error('refused');
    await budget.settle(a.reservation, 0.6);
    const b = await budget.reserve(0.6);
    if (!b.allowed) throw new Error('refused');
    await budget.settle(b.reservation, 0.4);
    expect(await budget.reserve(0.01)).toEqual({
      allowed: false,
      period: 'daily',
      limitUsd: 1,
      spendUsd: 1,
      resetsAt: '2025-04-01T00:00:00.000Z',
    });
  });

  it('counts reservations in flight against the limit', async () => {
    const budget = createMemoryBudget({ limits: { hourly: 1 }, now: () => T });
    const a = await budget.reserve(0.7);
    expect(a.allowed).toBe(true);
    expect((await budget.reserve(0.7)).allowed).toBe(true); // 0.7 < 1: starts, may overshoot by one request
    expect((await budget.reserve(0.7)).allowed).toBe(false); // 1.4 >= 1
    const status = await budget.status();
    expect(status.hourly).toMatchObject({ limit: 1, spend: 0, reserved: 1.4, remaining: 0, exceeded: true });
    expect(status.enabled).toBe(true);
    expect(budget.peekStatus()).toEqual(status);
    if (a.allowed) await budget.settle(a.reservation, 0);
    expect((await budget.status()).hourly).toMatchObject({ reserved: 0.7, exceeded: false });
  });

  it('overshoots by at most one estimate under a burst of concurrent requests', async () => {
    const budget = createMemoryBudget({ limits: { daily: 1 }, now: () => T });
    const first = await budget.reserve(0.95);
    if (first.allowed) await budget.settle(first.reservation, 0.95);
    const decisions = await Promise.all(Array.from({ length: 50 }, () => budget.reserve(0.1)));
    const admitted = decisions.filter((d) => d.allowed);
    expect(admitted).toHaveLength(1);
    await Promise.all(admitted.map((d) => (d.allowed ? budget.settle(d.reservation, 0.1) : undefined)));
    const spend = (await budget.status()).daily.spend;
    expect(spend).toBeLessThanOrEqual(1 + 0.1);
  });

  it('settle(undefined) charges the estimate; an unknown estimate holds nothing', async () => {
    const budget = createMemoryBudget({ limits: { daily: 10 }, now: () => T });
    const a = await budget.reserve(2);
    if (a.allowed) await budget.settle(a.reservation, undefined);
    const b = await budget.reserve(undefined);
    expect((await budget.status()).daily).toMatchObject({ spend: 2, reserved: 0, remaining: 8 });
    if (b.allowed) await budget.settle(b.reservation, 0.5);
    expect((await budget.status()).daily.spend).toBe(2.5);
  });

  it.each([
    ['hourly', 'daily', '2025-03-31T23:00:00.000Z'],
    ['daily', 'monthly', '2025-04-01T00:00:00.000Z'],
    ['monthly', 'hourly', '2025-04-01T00:00:00.000Z'],
  ] as const)(
    '%s spend resets on the UTC boundary',
    async (period: BudgetPeriod, other: BudgetPeriod, boundary) => {
      const clock = { t: T };
      const budget = createMemoryBudget({ limits: { [period]: 1 }, now: () => clock.t });
      const a = await budget.reserve(1);
      if (a.allowed) await budget.settle(a.reservation, 1);
      clock.t = Date.parse(boundary) - 1;
      expect(await budget.reserve(0.1)).toMatchObject({ allowed: false, period, resetsAt: boundary });
      clock.t = Date.parse(boundary);
      const status = await budget.status();
      expect(status[period]).toMatchObject({ spend: 0, exceeded: false, remaining: 1 });
      expect(status[other].limit).toBeNull();
      expect((await budget.reserve(0.1)).allowed).toBe(true);
    },
  );

  it('reports the period that blocks longest when several are exceeded', async () => {
    const budget = createMemoryBudget({ limits: { hourly: 1, daily: 1, monthly: 1 }, now: () => T });
    const a = await budget.reserve(1);
    if (a.allowed) await budget.settle(a.reservation, 1);
    expect(await budget.reserve(0)).toMatchObject({ allowed: false, period: 'monthly' });
  });

  it('charges a request straddling a boundary to the window where it finished', async () => {
    const clock = { t: Date.parse('2025-03-31T22:59:59Z') };
    const budget = createMemoryBudget({ limits: { hourly: 1 }, now: () => clock.t });
    const a = await budget.reserve(0.5);
    clock.t = Date.parse('2025-03-31T23:00:01Z');
    if (a.allowed) await budget.settle(a.reservation, 0.3);
    expect((await budget.status()).hourly).toMatchObject({ spend: 0.3, reserved: 0 });
  });

  it('logs crossing 80% and 100% once per window', async () => {
    const { lines, logger } = recordingLogger();
    const budget = createMemoryBudget({ limits: { daily: 1 }, now: () => T, logger });
    for (const cost of [0.5, 0.2, 0.15, 0.05, 0.2, 0.1]) {
      const d = await budget.reserve(cost);
      if (d.allowed) await budget.settle(d.reservation, cost);
    }
    const warnings = lines.filter((l) => l.startsWith('warn'));
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toContain('daily spend passed 80% of $1.00');
    expect(warnings[1]).toContain('daily limit of $1.00 reached');
  });

  it('restores spend of the current windows only', async () => {
    const budget = createMemoryBudget({
      limits: { daily: 5 },
      now: () => T,
      initial: {
        daily: { windowStart: periodStart('daily', T), spend: 4 },
        hourly: { windowStart: periodStart('hourly', T) - 3_600_000, spend: 9 },
      },
    });
    const status = await budget.status();
    expect(status.daily.spend).toBe(4);
    expect(status.hourly.spend).toBe(0);
  });

  it('describes its state for the start-up log', async () => {
    const none = createMemoryBudget({ limits: {} });
    expect(none.peekStatus()).toMatchObject({
      enabled: false,
      daily: { limit: null, remaining: null, exceeded: false },
    });
    expect(budgetStateLines(await none.status())).toEqual([
      'budget: no limits set (--budget, --budget-hourly, --budget-monthly)',
    ]);
    const budget = createMemoryBudget({ limits: { daily: 5, monthly: 100 }, now: () => T });
    const lines = budgetStateLines(await budget.status());
    expect(lines).toEqual([
      'budget: daily $5.00, spent $0.00 ($5.00 left), resets 2025-04-01T00:00:00.000Z',
      'budget: monthly $100.00, spent $0.00 ($100.00 left), resets 2025-04-01T00:00:00.000Z',
    ]);
  });
});
