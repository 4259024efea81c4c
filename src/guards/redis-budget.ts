import { randomUUID } from 'node:crypto';
import type { Logger } from '../log.js';
import type { SharedStore } from '../store/redis.js';
import {
  type Budget,
  type BudgetDecision,
  type BudgetLimits,
  type BudgetReservation,
  formatUsd,
  roundUsd,
} from './budget.js';
import { BUDGET_PERIODS, type BudgetPeriod, periodEnd, periodStart } from './budget-periods.js';
import { BudgetView, NANO, type Settlement, toNano } from './budget-view.js';
import { budgetCommands } from './redis-budget-script.js';

/** A window's key outlives its window by a day (for inspection); only the current one is read. */
const WINDOW_KEEP_MS = 24 * 3600 * 1000;
/** Most settlements kept while the store is unreachable; beyond, the oldest are logged and dropped. */
const MAX_PENDING = 100_000;

/** Options of `createRedisBudget`. */
export interface RedisBudgetOptions {
  limits: BudgetLimits;
  now?: () => number;
  logger: Logger;
  /**
   * A hold not settled within this time is settled at its estimate (its replica died). Default 15 min;
   * longer than any request lasts (`--upstream-timeout` per call).
   */
  holdTtlMs?: number;
  /** How often the fleet's spend is re-read for `peekStatus` (`/stats`). Default 1000 ms; 0: never. */
  refreshMs?: number;
}

/** The Redis budget plus its shutdown. */
export interface RedisBudget extends Budget {
  /** Applies settlements kept during an outage, stops the refresh timer. */
  close(): Promise<void>;
}

/**
 * Budget spend per period in Redis, shared by the fleet. Reservation and
 * settlement are each one Lua script, so of any number of concurrent
 * requests on any number of replicas only those that start while the
 * fleet's spend plus reservations is under the limit get in: the fleet
 * overshoots by at most one request's estimate (plus any excess of actual
 * over estimated cost).
 *
 * While Redis is unreachable: a request is admitted only while the last
 * spend this replica saw, plus what it admitted and charged itself since,
 * stays under the limit (refusals come only from that known spend); its
 * settlements are kept and applied once Redis is back, so no spend is lost.
 */
export function createRedisBudget(store: SharedStore, options: RedisBudgetOptions): RedisBudget {
  const now = options.now ?? Date.now;
  const { limits, logger } = options;
  const holdTtlMs = options.holdTtlMs ?? 15 * 60_000;
  const cmd = budgetCommands(store.redis);
  const holdKeys = [store.key('budget', 'holds'), store.key('budget', 'hold')];
  const windowKey = (p: BudgetPeriod, t: number) => store.key('budget', p, String(periodStart(p, t)));
  const view = new BudgetView(limits, windowKey, now());
  const { pending } = view;
  const holdIds = new WeakMap<BudgetReservation, string>();
  const warned = new Map<string, number>();

  const keysAt = (t: number) => [...holdKeys, ...BUDGET_PERIODS.map((p) => windowKey(p, t))];
  // Relative (PEXPIRE): replicas' clocks, and test clocks, need not match Redis's.
  const expiries = (t: number) => BUDGET_PERIODS.map((p) => periodEnd(p, t) - t + WINDOW_KEEP_MS);

  const warnCrossings = (t: number) => {
    for (const p of BUDGET_PERIODS) {
      const limit = limits[p];
      if (limit === undefined) continue;
      const w = view.known(p, t);
      const used = limit === 0 ? 1 : w.spend / NANO / limit;
      const level = used >= 1 ? 1 : used >= 0.8 ? 0.8 : 0;
      const id = `${p}:${w.start}`;
      if (level <= (warned.get(id) ?? 0)) continue;
      warned.set(id, level);
      const resetsAt = new Date(periodEnd(p, t)).toISOString();
      const fields = { spend: roundUsd(w.spend / NANO), limit, resets_at: resetsAt };
      if (level >= 1)
        logger.warn(
          `budget: ${p} limit of ${formatUsd(limit)} reached (fleet); new requests get 402 until the reset`,
          fields,
        );
      else logger.warn(`budget: ${p} spend passed 80% of ${formatUsd(limit)} (fleet)`, fields);
    }
  };

  const apply = async (s: Settlement): Promise<void> => {
    const t = now();
    view.remember(t, await cmd.svcBudgetSettle(s.keys, [t, s.holdId, s.charge, ...expiries(t)]));
  };
  let draining: Promise<void> | undefined;
  const drain = (): Promise<void> => {
    draining ??= (async () => {
      while (pending.length > 0 && store.healthy) {
        await apply(pending[0]!);
        pending.shift();
      }
    })()
      .catch((err: unknown) => {
        store.noteFailure(err);
        logger.warn('budget: settlements still pending', { error: String(err), pending: pending.length });
      })
      .finally(() => {
        draining = undefined;
      });
    return draining;
  };
  const unsubscribe = store.onReconnect(() => {
    if (pending.length > 0)
      logger.info(`budget: applying ${pending.length} settlement(s) kept during the outage`);
    void drain();
  });

  const refresh = async (): Promise<void> => {
    if (pending.length > 0) await drain();
    const t = now();
    view.remember(t, await cmd.svcBudgetSettle(keysAt(t), [t, '', 0, ...expiries(t)]));
  };
  const refreshMs = options.refreshMs ?? 1000;
  const timer =
    refreshMs > 0
      ? setInterval(() => {
          if (store.healthy) refresh().catch((err: unknown) => store.noteFailure(err));
        }, refreshMs)
      : undefined;
  timer?.unref();

  const reserveLocally = (t: number, amount: number): BudgetDecision => {
    const refusal = view.refusalAt(t);
    if (refusal) return { allowed: false, ...refusal };
    const reservation = { amountUsd: amount / NANO, windows: view.holdLocally(t, amount) };
    holdIds.set(reservation, '');
    return { allowed: true, reservation };
  };

  return {
    enabled: view.enabled,
    async reserve(estimatedUsd) {
      const t = now();
      const amount = toNano(estimatedUsd ?? 0);
      if (!store.healthy) return reserveLocally(t, amount);
      if (pending.length > 0) await drain();
      const holdId = randomUUID();
      const limitArgs = BUDGET_PERIODS.map((p) => (limits[p] === undefined ? '' : toNano(limits[p])));
      let reply: number[];
      try {
        const argv = [t, holdId, amount, t + holdTtlMs, ...limitArgs, ...expiries(t)];
        reply = await cmd.svcBudgetReserve(keysAt(t), argv);
      } catch (err) {
        store.noteFailure(err);
        return reserveLocally(t, amount);
      }
      const [allowed, ...amounts] = reply;
      view.remember(t, amounts);
      if (allowed !== 1) {
        const p = BUDGET_PERIODS.find((q) => limits[q] !== undefined) ?? 'daily';
        const w = view.known(p, t);
        const refusal = view.refusalAt(t) ?? {
          period: p,
          limitUsd: limits[p] ?? 0,
          spendUsd: roundUsd((w.spend + w.reserved) / NANO),
          resetsAt: new Date(periodEnd(p, t)).toISOString(),
        };
        return { allowed: false, ...refusal };
      }
      const windows = {} as Record<BudgetPeriod, number>;
      for (const p of BUDGET_PERIODS) windows[p] = periodStart(p, t);
      const reservation = { amountUsd: amount / NANO, windows };
      holdIds.set(reservation, amount > 0 ? holdId : '');
      return { allowed: true, reservation };
    },
    async settle(reservation, actualUsd) {
      const t = now();
      const holdId = holdIds.get(reservation) ?? '';
      holdIds.delete(reservation);
      if (holdId === '') view.releaseLocally(reservation.windows, toNano(reservation.amountUsd));
      const s: Settlement = { holdId, charge: toNano(actualUsd ?? reservation.amountUsd), keys: keysAt(t) };
      if (s.charge === 0 && holdId === '') return;
      try {
        if (!store.healthy) throw new Error('store unreachable');
        await apply(s);
      } catch (err) {
        store.noteFailure(err);
        pending.push(s);
        if (pending.length > MAX_PENDING) {
          const lost = pending.shift()!;
          logger.error('budget: too many settlements kept during the outage; the oldest is dropped', {
            charge_usd: lost.charge / NANO,
          });
        }
      }
      warnCrossings(t);
    },
    async status() {
      try {
        if (store.healthy) await refresh();
      } catch (err) {
        store.noteFailure(err); // the last known spend is shown
      }
      return view.statusAt(now());
    },
    peekStatus() {
      return view.statusAt(now());
    },
    async close() {
      if (timer) clearInterval(timer);
      unsubscribe();
      if (pending.length > 0) await drain();
      if (pending.length > 0) {
        const usd = pending.reduce((sum, s) => sum + s.charge, 0) / NANO;
        logger.error('budget: spend could not be written to the store before exit', {
          settlements: pending.length,
          usd: roundUsd(usd),
        });
      }
    },
  };
}
