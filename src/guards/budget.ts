import type { Logger } from '../log.js';
import { BUDGET_PERIODS, type BudgetPeriod, periodEnd, periodStart } from './budget-periods.js';

/** USD limits per period; an absent one is not enforced (its spend is still tracked). */
export type BudgetLimits = Partial<Record<BudgetPeriod, number>>;

/** One period of the `/stats` `budget` block. Amounts in USD. */
export interface BudgetPeriodStatus {
  /** The limit, or null when none is set. */
  limit: number | null;
  /** Settled spend in the current window. */
  spend: number;
  /** Estimated cost of requests in flight, held against the limit. */
  reserved: number;
  /** `limit - spend - reserved`, at least 0; null without a limit. */
  remaining: number | null;
  /** When this window ends and its spend resets (UTC ISO 8601). */
  resets_at: string;
  /** True while a new request would be refused for this period. */
  exceeded: boolean;
}

/** The `/stats` `budget` block: `enabled` (some limit set) and one entry per period. */
export type BudgetStatus = { enabled: boolean } & Record<BudgetPeriod, BudgetPeriodStatus>;

/** An admitted request's hold on the budget, given back to `settle`. */
export interface BudgetReservation {
  amountUsd: number;
  /** Window start per period when it was reserved. */
  windows: Record<BudgetPeriod, number>;
}

/** Why a request was refused: the period that blocks it longest. */
export interface BudgetRefusal {
  period: BudgetPeriod;
  limitUsd: number;
  /** Spend including in-flight reservations. */
  spendUsd: number;
  resetsAt: string;
}

export type BudgetDecision =
  | { allowed: true; reservation: BudgetReservation }
  | ({ allowed: false } & BudgetRefusal);

/**
 * Spend limits per UTC hour, day and month. Async so that a shared (Redis)
 * implementation can replace the in-memory one.
 */
export interface Budget {
  /**
   * Admits a request unless some period's spend (settled plus reserved) is
   * at or over its limit; on admission holds `estimatedUsd` (undefined: cost
   * unknown, holds nothing) against every period.
   */
  reserve(estimatedUsd: number | undefined): Promise<BudgetDecision>;
  /**
   * Releases the hold and charges the actual cost. `undefined` charges the
   * estimate (cost not known, e.g. an aborted stream: assume the worst);
   * 0 charges nothing (upstream error, cache hit).
   */
  settle(reservation: BudgetReservation, actualUsd: number | undefined): Promise<void>;
  status(): Promise<BudgetStatus>;
  /**
   * The status without waiting, for synchronous readers (`/stats`,
   * `/metrics`): exact for the in-memory budget, the last one fetched for a
   * shared one.
   */
  peekStatus(): BudgetStatus;
  /** True when at least one limit is set. */
  readonly enabled: boolean;
}

export interface MemoryBudgetOptions {
  limits: BudgetLimits;
  now?: () => number;
  logger?: Logger;
  /** Spend to start from (restored state); windows other than the current ones are ignored. */
  initial?: BudgetSnapshot;
  /**
   * Persistence, written ahead: called with the new state after every reservation and every settlement.
   * With a limit set, an admitted request waits for the promise of its reservation, so its hold is
   * durable before it is forwarded; settlements (and holds without a limit) do not wait.
   */
  persist?: (snapshot: BudgetSnapshot) => Promise<void>;
}

/**
 * Settled spend per period, the window it belongs to, and the holds of requests in flight: what
 * persistence keeps. A snapshot restored after a crash charges its holds (`reserved`) as spend: those
 * requests were forwarded and their cost is unknown, so their estimate is assumed.
 */
export type BudgetSnapshot = Partial<
  Record<BudgetPeriod, { windowStart: number; spend: number; reserved?: number }>
>;

interface Window {
  start: number;
  spend: number;
  reserved: number;
  /** Highest warning threshold already logged in this window (0, 0.8 or 1). */
  warned: number;
}

const THRESHOLDS = [0.8, 1] as const;

/** Rounds USD for display and JSON (nanodollars). */
export function roundUsd(usd: number): number {
  return Math.round(usd * 1e9) / 1e9;
}

/** `$1.23` style, more digits for tiny amounts. */
export function formatUsd(usd: number): string {
  return usd !== 0 && Math.abs(usd) < 0.01 ? `$${usd.toPrecision(3)}` : `$${usd.toFixed(2)}`;
}

/**
 * The in-memory budget. Reservation happens synchronously inside `reserve`,
 * so of any number of concurrent requests only those that start while the
 * total is under the limit get in: the overshoot is at most one request's
 * estimate (plus any amount by which actual costs exceed estimates).
 */
export function createMemoryBudget(options: MemoryBudgetOptions): Budget {
  const now = options.now ?? Date.now;
  const { limits, logger } = options;
  const windows = {} as Record<BudgetPeriod, Window>;
  const t0 = now();
  const held = BUDGET_PERIODS.map((p) => options.initial?.[p]).find(
    (r) => r && r.windowStart === periodStart('daily', t0) && (r.reserved ?? 0) > 0,
  );
  if (held)
    logger?.warn('budget: requests in flight when svc last stopped are charged at their estimate', {
      usd: roundUsd(held.reserved ?? 0),
    });
  for (const p of BUDGET_PERIODS) {
    const start = periodStart(p, t0);
    const restored = options.initial?.[p];
    const spend = restored && restored.windowStart === start ? restored.spend + (restored.reserved ?? 0) : 0;
    const limit = limits[p];
    const used = limit === undefined || limit === 0 ? 0 : spend / limit;
    windows[p] = { start, spend, reserved: 0, warned: THRESHOLDS.filter((x) => used >= x).at(-1) ?? 0 };
  }

  const current = (p: BudgetPeriod, t: number): Window => {
    const w = windows[p];
    const start = periodStart(p, t);
    if (w.start !== start) {
      if (w.spend > 0 || w.reserved > 0) {
        logger?.info(`budget: ${p} window reset`, {
          spent: roundUsd(w.spend),
          resets_at: new Date(periodEnd(p, t)).toISOString(),
        });
      }
      windows[p] = { start, spend: 0, reserved: 0, warned: 0 };
    }
    return windows[p];
  };
  const snapshot = (): BudgetSnapshot => {
    const out: BudgetSnapshot = {};
    for (const p of BUDGET_PERIODS) {
      const w = windows[p];
      out[p] = { windowStart: w.start, spend: w.spend, reserved: w.reserved };
    }
    return out;
  };
  const warnCrossings = (p: BudgetPeriod, w: Window, t: number) => {
    const limit = limits[p];
    if (limit === undefined) return;
    const used = limit === 0 ? 1 : w.spend / limit;
    const crossed = THRESHOLDS.filter((x) => used >= x && x > w.warned).at(-1);
    if (crossed === undefined) return;
    w.warned = crossed;
    const fields = { spend: roundUsd(w.spend), limit, resets_at: new Date(periodEnd(p, t)).toISOString() };
    if (crossed >= 1)
      logger?.warn(
        `budget: ${p} limit of ${formatUsd(limit)} reached; new requests get 402 until the reset`,
        fields,
      );
    else logger?.warn(`budget: ${p} spend passed 80% of ${formatUsd(limit)}`, fields);
  };

  const enabled = BUDGET_PERIODS.some((p) => limits[p] !== undefined);
  const statusAt = (t: number): BudgetStatus => {
    const out = { enabled } as BudgetStatus;
    for (const p of BUDGET_PERIODS) {
      const w = current(p, t);
      const limit = limits[p] ?? null;
      out[p] = {
        limit,
        spend: roundUsd(w.spend),
        reserved: roundUsd(w.reserved),
        remaining: limit === null ? null : roundUsd(Math.max(0, limit - w.spend - w.reserved)),
        resets_at: new Date(periodEnd(p, t)).toISOString(),
        exceeded: limit !== null && w.spend + w.reserved >= limit,
      };
    }
    return out;
  };

  return {
    enabled,
    async reserve(estimatedUsd) {
      const t = now();
      let refusal: BudgetRefusal | undefined;
      for (const p of BUDGET_PERIODS) {
        const limit = limits[p];
        const w = current(p, t);
        if (limit === undefined || w.spend + w.reserved < limit) continue;
        const resetsAt = periodEnd(p, t);
        // Report the period whose refusal lasts longest: that is when requests resume.
        if (!refusal || resetsAt >= Date.parse(refusal.resetsAt)) {
          refusal = {
            period: p,
            limitUsd: limit,
            spendUsd: roundUsd(w.spend + w.reserved),
            resetsAt: new Date(resetsAt).toISOString(),
          };
        }
      }
      if (refusal) return { allowed: false, ...refusal };
      const amountUsd = Math.max(0, estimatedUsd ?? 0);
      const held = {} as Record<BudgetPeriod, number>;
      for (const p of BUDGET_PERIODS) {
        const w = current(p, t);
        w.reserved += amountUsd;
        held[p] = w.start;
      }
      if (amountUsd > 0) {
        // With a limit, the hold is durable before the request goes on; without one, nothing is capped.
        const written = options.persist?.(snapshot());
        if (enabled) await written;
      }
      return { allowed: true, reservation: { amountUsd, windows: held } };
    },
    async settle(reservation, actualUsd) {
      const t = now();
      const charge = Math.max(0, actualUsd ?? reservation.amountUsd);
      for (const p of BUDGET_PERIODS) {
        const w = current(p, t);
        if (reservation.windows[p] === w.start) w.reserved = Math.max(0, w.reserved - reservation.amountUsd);
        // A request that straddles a boundary is charged to the window in which it finished.
        w.spend += charge;
        warnCrossings(p, w, t);
      }
      if (charge > 0 || reservation.amountUsd > 0) void options.persist?.(snapshot());
    },
    async status() {
      return statusAt(now());
    },
    peekStatus() {
      return statusAt(now());
    },
  };
}

/** Start-up lines describing the budget state (limits, spend, resets). */
export function budgetStateLines(status: BudgetStatus): string[] {
  const set = BUDGET_PERIODS.filter((p) => status[p].limit !== null);
  if (set.length === 0) return ['budget: no limits set (--budget, --budget-hourly, --budget-monthly)'];
  return set.map((p) => {
    const s = status[p];
    const state = s.exceeded ? 'EXCEEDED, requests get 402' : `${formatUsd(s.remaining ?? 0)} left`;
    return `budget: ${p} ${formatUsd(s.limit ?? 0)}, spent ${formatUsd(s.spend)} (${state}), resets ${s.resets_at}`;
  });
}
