import { type BudgetLimits, type BudgetRefusal, type BudgetStatus, roundUsd } from './budget.js';
import { BUDGET_PERIODS, type BudgetPeriod, periodEnd, periodStart } from './budget-periods.js';

/** Amounts in the shared budget are integer nano-USD. */
export const NANO = 1e9;

/** USD -> nano-USD (never negative). */
export const toNano = (usd: number) => Math.max(0, Math.round(usd * NANO));

/** Spend and reservations (nano-USD) of one window. */
export interface WindowAmounts {
  start: number;
  spend: number;
  reserved: number;
}

/** A settlement to apply in Redis (kept while it is unreachable, replayed after). */
export interface Settlement {
  /** The hold to release ('' for a request admitted locally or holding nothing). */
  holdId: string;
  /** nano-USD to charge. */
  charge: number;
  /** Script keys at settlement time: holds, hold info, then the three windows charged. */
  keys: string[];
}

/**
 * What one replica knows of the fleet's budget: each window as Redis last
 * answered, plus what this replica did since that Redis has not seen yet
 * (requests it admitted on its own during an outage, settlements not yet
 * applied). Decisions made while Redis is unreachable, and `/stats` between
 * refreshes, come from here.
 */
export class BudgetView {
  /** Settlements not applied in Redis yet, oldest first. */
  readonly pending: Settlement[] = [];
  private readonly seen = {} as Record<BudgetPeriod, WindowAmounts>;
  private readonly localHeld = {} as Record<BudgetPeriod, WindowAmounts>;

  constructor(
    private readonly limits: BudgetLimits,
    private readonly windowKey: (p: BudgetPeriod, t: number) => string,
    t: number,
  ) {
    for (const p of BUDGET_PERIODS) {
      this.seen[p] = { start: periodStart(p, t), spend: 0, reserved: 0 };
      this.localHeld[p] = { ...this.seen[p] };
    }
  }

  /** True when at least one limit is set. */
  get enabled(): boolean {
    return BUDGET_PERIODS.some((p) => this.limits[p] !== undefined);
  }

  /** Takes a script's answer: spend and reserved per period, hourly first. */
  remember(t: number, amounts: number[]): void {
    BUDGET_PERIODS.forEach((p, i) => {
      this.seen[p] = {
        start: periodStart(p, t),
        spend: amounts[2 * i] ?? 0,
        reserved: amounts[2 * i + 1] ?? 0,
      };
    });
  }

  /** A window now: Redis as last seen plus this replica's unapplied charges and local holds. */
  known(p: BudgetPeriod, t: number): WindowAmounts {
    const start = periodStart(p, t);
    const base = this.seen[p].start === start ? this.seen[p] : { start, spend: 0, reserved: 0 };
    const key = this.windowKey(p, t);
    const unapplied = this.pending.reduce((sum, s) => sum + (s.keys.includes(key) ? s.charge : 0), 0);
    const held = this.localHeld[p].start === start ? this.localHeld[p].reserved : 0;
    return { start, spend: base.spend + unapplied, reserved: base.reserved + held };
  }

  /** Why a request would be refused now (the period that blocks longest), or undefined. */
  refusalAt(t: number): BudgetRefusal | undefined {
    let refusal: BudgetRefusal | undefined;
    for (const p of BUDGET_PERIODS) {
      const limit = this.limits[p];
      const w = this.known(p, t);
      if (limit === undefined || w.spend + w.reserved < toNano(limit)) continue;
      const resetsAt = periodEnd(p, t);
      if (!refusal || resetsAt >= Date.parse(refusal.resetsAt)) {
        const spendUsd = roundUsd((w.spend + w.reserved) / NANO);
        refusal = { period: p, limitUsd: limit, spendUsd, resetsAt: new Date(resetsAt).toISOString() };
      }
    }
    return refusal;
  }

  /** Holds `amount` for a request admitted without Redis; returns the window starts. */
  holdLocally(t: number, amount: number): Record<BudgetPeriod, number> {
    const windows = {} as Record<BudgetPeriod, number>;
    for (const p of BUDGET_PERIODS) {
      const start = periodStart(p, t);
      if (this.localHeld[p].start !== start) this.localHeld[p] = { start, spend: 0, reserved: 0 };
      this.localHeld[p].reserved += amount;
      windows[p] = start;
    }
    return windows;
  }

  /** Gives back a local hold made in `windows`. */
  releaseLocally(windows: Record<BudgetPeriod, number>, amount: number): void {
    for (const p of BUDGET_PERIODS) {
      const held = this.localHeld[p];
      if (held.start === windows[p]) held.reserved = Math.max(0, held.reserved - amount);
    }
  }

  /** The `/stats` budget block as this replica knows it. */
  statusAt(t: number): BudgetStatus {
    const out = { enabled: this.enabled } as BudgetStatus;
    for (const p of BUDGET_PERIODS) {
      const w = this.known(p, t);
      const limit = this.limits[p] ?? null;
      const spend = w.spend / NANO;
      const reserved = w.reserved / NANO;
      out[p] = {
        limit,
        spend: roundUsd(spend),
        reserved: roundUsd(reserved),
        remaining: limit === null ? null : roundUsd(Math.max(0, limit - spend - reserved)),
        resets_at: new Date(periodEnd(p, t)).toISOString(),
        exceeded: limit !== null && w.spend + w.reserved >= toNano(limit),
      };
    }
    return out;
  }
}
