import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Low } from 'lowdb';
import lockfile from 'proper-lockfile';
import { type Logger, silentLogger } from '../log.js';
import { savingsCost } from './cost.js';
import { loadPricing, type PricingTable, priceFor } from './pricing.js';
import { readSavingsData, SavingsFileAdapter } from './savings-adapter.js';
import {
  addToDelta,
  applyDelta,
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

  constructor(options: SavingsFileOptions) {
    this.path = options.path;
    this.logger = options.logger ?? silentLogger;
    this.now = options.now ?? Date.now;
    this.flushDelayMs = options.flushDelayMs ?? 2000;
    this.lockRetries = options.lockRetries ?? 40;
    this.adapter = new SavingsFileAdapter(this.path, this.now, this.logger);
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
    const generation = this.generation;
    let view: SavingsView | undefined;
    if (!this.inFlight) {
      const found = await readSavingsData(this.path, now).catch((err) => {
        this.logger.warn('savings file cannot be read', { path: this.path, error: String(err) });
        return { state: 'malformed' as const, reason: String(err) };
      });
      if (generation === this.generation && !this.inFlight) {
        view = { data: found.state === 'ok' ? found.data : emptySavings(now), state: found.state };
      }
    }
    if (!view) {
      view = {
        data: structuredClone(this.lastSeen?.data ?? emptySavings(now)),
        state: this.lastSeen?.state ?? 'missing',
      };
      if (this.inFlight) applyDelta(view.data, copyDelta(this.inFlight), now);
    }
    applyDelta(view.data, copyDelta(this.pending), now);
    return view;
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
        this.lastSeen = { data: structuredClone(this.db.data), state: 'ok' };
        written = true;
      }, lockRetries);
      this.writes += 1;
      return this.pending.size === 0;
    } catch (err) {
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

export interface RecordSavingsOptions {
  /** The savings file (`config.savingsPath`). */
  savingsPath: string;
  tokensSaved: number;
  /** USD saved; when omitted it is priced from `model` (undefined when the model is unknown). */
  savingsUsd?: number | undefined;
  model?: string | undefined;
  /** A pricing table to use for `model` (default: the shipped one plus `pricingPath`). */
  pricing?: PricingTable;
  pricingPath?: string | undefined;
  now?: () => number;
  logger?: Logger;
}

/**
 * Records one saving in the savings file and writes it at once, safely beside
 * other writers (the lock-read-add-write of `SavingsFile`). For `svc compress`.
 * Resolves with the lifetime totals after the write, or undefined when the
 * write failed (logged). A run that saved nothing writes nothing.
 *
 * @example await recordSavings({ savingsPath: config.savingsPath, tokensSaved: 1200, model: 'gpt-4o' })
 */
export async function recordSavings(options: RecordSavingsOptions): Promise<SavingsAmount | undefined> {
  const now = options.now ?? Date.now;
  const file = new SavingsFile({ path: options.savingsPath, now, logger: options.logger ?? silentLogger });
  if (options.tokensSaved <= 0) return (await file.view()).data.lifetime;
  let usd = options.savingsUsd;
  if (usd === undefined && options.model) {
    const price = priceFor(
      options.pricing ?? loadPricing({ pricingPath: options.pricingPath }),
      options.model,
    );
    usd = price ? savingsCost(price, options.tokensSaved) : undefined;
  }
  file.record({ time: now(), tokensSaved: options.tokensSaved, savingsUsd: usd });
  if (!(await file.close(120))) return undefined;
  return (await file.view()).data.lifetime;
}
