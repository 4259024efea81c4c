/** The budget periods, shortest first. */
export const BUDGET_PERIODS = ['hourly', 'daily', 'monthly'] as const;

/** One budget period. Periods are calendar windows in UTC. */
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number];

/** Start (ms since epoch) of the UTC window of `period` that contains `t`. */
export function periodStart(period: BudgetPeriod, t: number): number {
  const d = new Date(t);
  switch (period) {
    case 'hourly':
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), d.getUTCHours());
    case 'daily':
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
    case 'monthly':
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  }
}

/** Start of the next window of `period` after the one containing `t`: when its spend resets. */
export function periodEnd(period: BudgetPeriod, t: number): number {
  const start = new Date(periodStart(period, t));
  switch (period) {
    case 'hourly':
      return start.getTime() + 3_600_000;
    case 'daily':
      return Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), start.getUTCDate() + 1);
    case 'monthly':
      return Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1);
  }
}
