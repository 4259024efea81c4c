/**
 * UTC calendar periods for the rollups. Every period starts on a UTC boundary;
 * weeks start on Monday (ISO 8601). Hours nest in days, days in weeks and in
 * months, so an hourly amount can be added to its day, week and month.
 */
export type Period = 'hourly' | 'daily' | 'weekly' | 'monthly';

/** The rollup periods, finest first. */
export const PERIODS: readonly Period[] = ['hourly', 'daily', 'weekly', 'monthly'];

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** Start (ms since epoch) of the UTC period that contains `ms`. */
export function periodStart(period: Period, ms: number): number {
  const d = new Date(ms);
  switch (period) {
    case 'hourly':
      return Math.floor(ms / HOUR_MS) * HOUR_MS;
    case 'daily':
      return Math.floor(ms / DAY_MS) * DAY_MS;
    case 'weekly': {
      const day = Math.floor(ms / DAY_MS) * DAY_MS;
      // getUTCDay: Sunday 0 .. Saturday 6; days since Monday is (day + 6) % 7.
      return day - ((d.getUTCDay() + 6) % 7) * DAY_MS;
    }
    case 'monthly':
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  }
}

/** Start of the period after the one starting at `start`. */
export function nextPeriodStart(period: Period, start: number): number {
  switch (period) {
    case 'hourly':
      return start + HOUR_MS;
    case 'daily':
      return start + DAY_MS;
    case 'weekly':
      return start + 7 * DAY_MS;
    case 'monthly': {
      const d = new Date(start);
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
    }
  }
}

/** Start of the period `count` periods before the one containing `ms`. */
export function periodsBack(period: Period, ms: number, count: number): number {
  const start = periodStart(period, ms);
  switch (period) {
    case 'hourly':
      return start - count * HOUR_MS;
    case 'daily':
      return start - count * DAY_MS;
    case 'weekly':
      return start - count * 7 * DAY_MS;
    case 'monthly': {
      const d = new Date(start);
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - count, 1);
    }
  }
}

/** UTC ISO 8601 text of a time, e.g. `2026-03-02T00:00:00.000Z`. */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}
