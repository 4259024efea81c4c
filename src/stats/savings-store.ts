import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Low } from 'lowdb';
import lockfile from 'proper-lockfile';
import { type Logger, silentLogger } from '../log.js';
import { CachedSavingsReader, SavingsFileAdapter } from './savings-adapter.js';
import {
  addToDelta,
  applyDelta,
  type Checkpoint,
  emptySavings,
  mergeDeltas,
  type SavingsAmount,
  type SavingsData,
  type SavingsDelta,
  type SavingsRecord,
} from './savings-data.js';

export interface SavingsFileOptions {
  /** The file (`config.savingsPath`, default `~/.svc/proxy_savings.json`). */
  path: string;
  logger?: Logger;
  now?: () => number;
  /** Records are coalesced and written at most this often (ms). Default 2000. */
  flushDelayMs?: number;
  /** Lock attempts before a flush gives up and keeps its delta for the next one. Default 40. */
  lockRetries?: number;
}

/** A snapshot of the file with this writer's unwritten savings added. */
export interface SavingsView {
  data: SavingsData;
  /** `malformed` when the file on disk could not be read (it is moved aside at the next write). */
  state: 'ok' | 'missing' | 'malformed';
}

/**
 * The durable savings file, shared by several writers (a server and any
 * number of `svc compress` runs). Each writer keeps its own unwritten delta;
 * a flush takes the file lock (proper-lockfile), reads what is on disk, adds
 * the delta and writes atomically, so no writer overwrites another's totals.
 * Records are coalesced: one write per `flushDelayMs`, plus one on `close()`.
 */
export class SavingsFile {
  readonly path: string;
  /** Successful writes so far (for tests and the bench). */
  writes = 0;
  /** Why the last flush failed, if it did. */
  lastError: unknown;
  private pending: SavingsDelta = new Map();
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();
  /** The delta a flush is writing right now. */
  private inFlight: SavingsDelta | undefined;
  /** Bumped when a flush starts and ends, so a view can tell that one raced it. */
  private generation = 0;
  /** The file as this writer last read or wrote it. */
  private lastSeen: SavingsView | undefined;
  private readonly logger: Logger;
  private readonly now: () => number;
  private readonly flushDelayMs: number;
  private readonly lockRetries: number;
  private readonly adapter: SavingsFileAdapter;
  private readonly db: Low<SavingsData>;
  private readonly reader: CachedSavingsReader;

  constructor(options: SavingsFileOptions) {
    this.path = options.path;
    this.logger = options.logger ?? silentLogger;
    this.now = options.now ?? Date.now;
    this.flushDelayMs = options.flushDelayMs ?? 2000;
    this.lockRetries = options.lockRetries ?? 40;
    this.adapter = new SavingsFileAdapter(this.path, this.now, this.logger);
    this.reader = new CachedSavingsReader(this.path);
    this.db = new Low<SavingsData>(this.adapter, emptySavings(this.now()));
  }

  /**
   * Checks the file at start-up: a malformed one is moved aside and a fresh
   * one written. Never throws: a file that cannot be read is logged and the
   * writer keeps its savings in memory until a later flush succeeds.
   */
  async open(): Promise<void> {
    await this.serialized(async () => {
      try {
        await this.locked(async () => {
          const exists = await this.readDb();
          if (this.adapter.movedAside) await this.db.write();
          this.lastSeen = {
            data: structuredClone(this.db.data),
            state: exists || this.adapter.movedAside ? 'ok' : 'missing',
          };
        });
      } catch (err) {
        this.logger.error('savings file cannot be opened; savings are kept in memory until it can', {
          path: this.path,
          error: String(err),
        });
      }
    });
  }

  /** Adds one saving; it reaches the file at the next flush. */
  record(record: SavingsRecord): void {
    addToDelta(this.pending, record);
    this.schedule();
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.flushDelayMs);
    this.timer.unref();
  }

  /** Unwritten savings of this writer, summed. */
  pendingTotal(): SavingsAmount {
    const view = emptySavings(0);
    applyDelta(view, this.pending, 0);
    return view.lifetime;
  }

  /** Writes the unwritten savings now. Resolves true when nothing is left unwritten. */
  flush(lockRetries = this.lockRetries): Promise<boolean> {
    return this.serialized(() => this.flushOnce(lockRetries));
  }

  /**
   * The file as it is now plus this writer's unwritten savings (no lock, no
   * write). Never waits for a flush: while one is writing, the view is the
   * file as last seen plus what is being written.
   */
  async view(): Promise<SavingsView> {
    const now = this.now();
    const base = await this.base(now);
    const data = structuredClone(base.data);
    for (const delta of base.deltas) applyDelta(data, copyDelta(delta), now);
    return { data, state: base.state };
  }

  /** Lifetime totals and the newest `recent` checkpoints, as `view()` would give them, without copying the rollups. */
  async summary(
    recent: number,
  ): Promise<{ lifetime: SavingsAmount; history: Checkpoint[]; state: SavingsView['state'] }> {
    const now = this.now();
    const base = await this.base(now);
    const small = emptySavings(now);
    small.lifetime = { ...base.data.lifetime };
    small.history = base.data.history.slice(-recent).map((c) => ({ ...c }));
    for (const delta of base.deltas) applyDelta(small, copyDelta(delta), now);
    return { lifetime: small.lifetime, history: small.history.slice(-recent), state: base.state };
  }

  /** The file's content (shared: do not mutate) and the deltas of this writer not in it. */
  private async base(
    now: number,
  ): Promise<{ data: SavingsData; state: SavingsView['state']; deltas: SavingsDelta[] }> {
    const generation = this.generation;
    if (!this.inFlight) {
      const found = await this.reader.read(now).catch((err) => {
        this.logger.warn('savings file cannot be read', { path: this.path, error: String(err) });
        return { state: 'malformed' as const, reason: String(err) };
      });
      if (generation === this.generation && !this.inFlight) {
        const data = found.state === 'ok' ? found.data : emptySavings(now);
        return { data, state: found.state, deltas: [this.pending] };
      }
    }
    return {
      data: this.lastSeen?.data ?? emptySavings(now),
      state: this.lastSeen?.state ?? 'missing',
      deltas: this.inFlight ? [this.inFlight, this.pending] : [this.pending],
    };
  }

  /**
   * Stops the timer and writes what is left (more lock attempts than a
   * routine flush). Resolves true when everything was written.
   */
  async close(lockRetries = this.lockRetries * 3): Promise<boolean> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const done = await this.flush(lockRetries);
    if (!done) {
      this.logger.error('savings could not be written before exit', {
        path: this.path,
        ...this.pendingTotal(),
      });
    }
    return done;
  }

  private serialized<T>(task: () => Promise<T>): Promise<T> {
    const run = this.chain.then(task);
    this.chain = run.then(
      () => {},
      () => {},
    );
    return run;
  }

  private async flushOnce(lockRetries: number): Promise<boolean> {
    if (this.pending.size === 0) return true;
    const delta = this.pending;
    this.pending = new Map();
    this.inFlight = delta;
    this.generation += 1;
    let written = false;
    try {
      await this.locked(async () => {
        await this.readDb();
        applyDelta(this.db.data, delta, this.now());
        await this.db.write();
        // lastSeen now holds the delta: stop counting it as in flight in the
        // same step, or a view taken before the lock is released counts it twice.
        this.lastSeen = { data: structuredClone(this.db.data), state: 'ok' };
        this.inFlight = undefined;
        written = true;
      }, lockRetries);
      this.writes += 1;
      return this.pending.size === 0;
    } catch (err) {
      this.lastError = err;
      if (!written) {
        mergeDeltas(this.pending, delta);
        this.logger.warn('savings not written yet; will retry', { path: this.path, error: String(err) });
        this.schedule();
      }
      return false;
    } finally {
      this.inFlight = undefined;
      this.generation += 1;
    }
  }

  /** Reads the file into the lowdb instance; false when there was none. */
  private async readDb(): Promise<boolean> {
    this.db.data = emptySavings(this.now());
    const before = this.db.data;
    await this.db.read();
    return this.db.data !== before;
  }

  private async locked(task: () => Promise<void>, retries = this.lockRetries): Promise<void> {
    await mkdir(dirname(this.path), { recursive: true });
    const release = await lockfile.lock(this.path, {
      realpath: false,
      stale: 10_000,
      retries: { retries, factor: 1.3, minTimeout: 10, maxTimeout: 200, randomize: true },
      onCompromised: (err) => this.logger.warn('savings file lock was taken over', { error: String(err) }),
    });
    try {
      await task();
    } finally {
      await release().catch((err) => this.logger.warn('savings lock release failed', { error: String(err) }));
    }
  }
}

function copyDelta(delta: SavingsDelta): SavingsDelta {
  return new Map([...delta].map(([hour, amount]) => [hour, { ...amount }]));
}
