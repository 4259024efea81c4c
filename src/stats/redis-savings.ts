import { type Logger, silentLogger } from '../log.js';
import type { SharedStore } from '../store/redis.js';
import { iso, PERIODS, type Period, periodStart, periodsBack } from './periods.js';
import { savingsCommands } from './redis-savings-script.js';
import {
  addToDelta,
  applyDelta,
  type Checkpoint,
  emptySavings,
  HISTORY_MAX_CHECKPOINTS,
  mergeDeltas,
  ROLLUP_RETENTION,
  type SavingsAmount,
  type SavingsData,
  type SavingsDelta,
  type SavingsRecord,
  zeroAmount,
} from './savings-data.js';
import type { SavingsView } from './savings-store.js';

/** What the stats part needs of a savings store: the savings file, or the fleet's totals in Redis. */
export interface SavingsStore {
  open(): Promise<void>;
  record(record: SavingsRecord): void;
  flush(): Promise<boolean>;
  view(): Promise<SavingsView>;
  summary(
    recent: number,
  ): Promise<{ lifetime: SavingsAmount; history: Checkpoint[]; state: SavingsView['state'] }>;
  close(): Promise<boolean>;
}

/** Options of `RedisSavingsStore`. */
export interface RedisSavingsOptions {
  logger?: Logger;
  now?: () => number;
  /** Records are coalesced and sent at most this often (ms). Default 500. */
  flushDelayMs?: number;
}

const AMOUNT_FIELDS = [
  'tokens_saved',
  'compression_savings_usd',
  'requests',
  'unpriced_tokens_saved',
  'cli_tokens_saved',
  'cli_runs',
  'cache_aware_savings_usd',
] as const;
const roundUsd = (usd: number) => Math.round(usd * 1e10) / 1e10;

function amountFrom(get: (field: string) => string | undefined): SavingsAmount {
  const a = zeroAmount();
  for (const f of AMOUNT_FIELDS) a[f] = Number(get(f) ?? 0) || 0;
  a.compression_savings_usd = roundUsd(a.compression_savings_usd);
  a.cache_aware_savings_usd = roundUsd(a.cache_aware_savings_usd);
  return a;
}

/**
 * The savings totals and checkpoints of the whole fleet, in Redis: each
 * replica adds its coalesced delta (lifetime, rollups, one checkpoint per
 * minute) in one Lua script, so `/stats`, `/stats-history`, `/metrics` and
 * `svc history --store` show every replica's savings. Records made while
 * Redis is unreachable are kept and sent after it is back; views then show
 * the last state read plus this replica's unsent savings.
 */
export class RedisSavingsStore implements SavingsStore {
  private pending: SavingsDelta = new Map();
  private inFlight: SavingsDelta | undefined;
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<boolean> = Promise.resolve(true);
  private lastSeen: SavingsData | undefined;
  private readonly logger: Logger;
  private readonly now: () => number;
  private readonly flushDelayMs: number;
  private readonly p: string;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly store: SharedStore,
    options: RedisSavingsOptions = {},
  ) {
    this.logger = options.logger ?? silentLogger;
    this.now = options.now ?? Date.now;
    this.flushDelayMs = options.flushDelayMs ?? 500;
    this.p = store.key('savings', '');
    this.unsubscribe = store.onReconnect(() => {
      if (this.pending.size > 0) void this.flush();
    });
  }

  async open(): Promise<void> {
    try {
      this.lastSeen = await this.read();
    } catch (err) {
      this.logger.warn('savings: could not read the shared totals yet', { error: String(err) });
    }
  }

  record(record: SavingsRecord): void {
    // The shared totals in Redis keep no per-project/model/client split (issue 18, item 7: file only).
    const { attribution: _attribution, ...plain } = record;
    addToDelta(this.pending, plain);
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.flushDelayMs);
    this.timer.unref();
  }

  flush(): Promise<boolean> {
    this.chain = this.chain.then(() => this.flushOnce());
    return this.chain;
  }

  private async flushOnce(): Promise<boolean> {
    if (this.pending.size === 0) return true;
    const delta = this.pending;
    this.pending = new Map();
    this.inFlight = delta;
    const now = this.now();
    const entries = [...delta].map(([hour, a]) => ({
      b: Object.fromEntries(PERIODS.map((period) => [period, iso(periodStart(period, hour))])),
      a,
    }));
    const cutoffs = Object.fromEntries(
      PERIODS.map((period: Period) => [period, iso(periodsBack(period, now, ROLLUP_RETENTION[period] - 1))]),
    );
    try {
      await savingsCommands(this.store.redis).svcSavingsApply(
        this.p,
        iso(now),
        Math.floor(now / 60_000),
        JSON.stringify(entries),
        HISTORY_MAX_CHECKPOINTS,
        JSON.stringify(cutoffs),
      );
      return this.pending.size === 0;
    } catch (err) {
      this.store.noteFailure(err);
      mergeDeltas(this.pending, delta);
      if (this.store.healthy)
        this.logger.warn('savings: not sent to the store yet; will retry', { error: String(err) });
      if (!this.timer) {
        this.timer = setTimeout(
          () => {
            this.timer = undefined;
            void this.flush();
          },
          Math.max(this.flushDelayMs, 1000),
        );
        this.timer.unref();
      }
      return false;
    } finally {
      this.inFlight = undefined;
    }
  }

  /** The fleet's savings as stored in Redis (throws while it is unreachable). */
  async read(): Promise<SavingsData> {
    const r = this.store.redis;
    const p = this.p;
    const [lifetime, meta, hist, cps, ...rollups] = await Promise.all([
      r.hgetall(`${p}lifetime`),
      r.hgetall(`${p}meta`),
      r.zrange(`${p}hist`, 0, -1),
      r.hgetall(`${p}cp`),
      ...PERIODS.map((period) => r.hgetall(`${p}r:${period}`)),
    ]);
    const now = this.now();
    const data = emptySavings(now);
    data.created_at = meta.created_at ?? data.created_at;
    data.updated_at = meta.updated_at ?? data.updated_at;
    data.lifetime = amountFrom((f) => lifetime[f]);
    data.history = hist.flatMap((m) => {
      const text = cps[m];
      return text ? [JSON.parse(text) as Checkpoint] : [];
    });
    PERIODS.forEach((period, i) => {
      const fields = rollups[i] ?? {};
      const starts = new Set(Object.keys(fields).map((f) => f.slice(0, f.indexOf('|'))));
      for (const start of [...starts].sort())
        data.rollups[period][start] = amountFrom((f) => fields[`${start}|${f}`]);
    });
    return data;
  }

  private async base(): Promise<{ data: SavingsData; deltas: SavingsDelta[] }> {
    const deltas = this.inFlight ? [this.inFlight, this.pending] : [this.pending];
    if (this.store.healthy && !this.inFlight) {
      try {
        this.lastSeen = await this.read();
        return { data: this.lastSeen, deltas: [this.pending] };
      } catch {
        // Outage: the last state read.
      }
    }
    return { data: this.lastSeen ?? emptySavings(this.now()), deltas };
  }

  async view(): Promise<SavingsView> {
    const { data, deltas } = await this.base();
    const out = structuredClone(data);
    for (const delta of deltas)
      if (delta.size > 0) applyDelta(out, new Map([...delta].map(([h, a]) => [h, { ...a }])), this.now());
    return { data: out, state: 'ok' };
  }

  async summary(recent: number) {
    const { data } = await this.view();
    return { lifetime: data.lifetime, history: data.history.slice(-recent), state: 'ok' as const };
  }

  async close(): Promise<boolean> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.unsubscribe();
    const done = await this.flush();
    if (!done) {
      const left = emptySavings(0);
      applyDelta(left, this.pending, 0);
      this.logger.error('savings could not be sent to the store before exit', { ...left.lifetime });
    }
    return done;
  }
}
