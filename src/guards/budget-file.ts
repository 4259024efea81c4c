import { mkdir, readdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { processAlive } from '../ccr/sweep.js';
import type { Logger } from '../log.js';
import type { BudgetSnapshot } from './budget.js';
import { BUDGET_PERIODS } from './budget-periods.js';

/**
 * Where the budget's settled spend survives restarts (`<home>/budget.json`),
 * so that restarting the server does not reset a day's or a month's spend.
 */
export interface BudgetFile {
  /** The saved spend; undefined when the file is missing or unreadable (a warning is logged). */
  load(): Promise<BudgetSnapshot | undefined>;
  /**
   * Writes `snapshot` (atomically: a temporary file, then rename); resolves once it, or a later
   * snapshot, is in the file. Concurrent calls share writes (group commit): while one write runs, the
   * newest snapshot waits and goes in the next.
   */
  write(snapshot: BudgetSnapshot): Promise<void>;
  /** Waits for every write asked for (shutdown). */
  flush(): Promise<void>;
}

/** Keeps only well-formed period entries of a parsed file. */
function parseSnapshot(data: unknown): BudgetSnapshot | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const periods = (data as { periods?: unknown }).periods;
  if (typeof periods !== 'object' || periods === null) return undefined;
  const out: BudgetSnapshot = {};
  for (const p of BUDGET_PERIODS) {
    const entry = (periods as Record<string, unknown>)[p] as
      | { windowStart?: unknown; spend?: unknown }
      | undefined;
    if (
      entry &&
      typeof entry.windowStart === 'number' &&
      Number.isFinite(entry.windowStart) &&
      typeof entry.spend === 'number' &&
      Number.isFinite(entry.spend) &&
      entry.spend >= 0
    ) {
      const reserved = (entry as { reserved?: unknown }).reserved;
      out[p] = { windowStart: entry.windowStart, spend: entry.spend };
      if (typeof reserved === 'number' && Number.isFinite(reserved) && reserved > 0)
        out[p].reserved = reserved;
    }
  }
  return out;
}

/**
 * A budget file at `path`, written ahead of the requests it admits (see `BudgetFile.write`).
 *
 * @example const file = createBudgetFile(join(config.home, 'budget.json'), { logger })
 */
export function createBudgetFile(path: string, options: { logger: Logger }): BudgetFile {
  let pending: BudgetSnapshot | undefined;
  /** The write running now, and the one queued behind it (which takes the newest snapshot). */
  let running: Promise<void> | undefined;
  let next: Promise<void> | undefined;
  const tmp = `${path}.${process.pid}.tmp`;

  const writeOnce = async (): Promise<void> => {
    const snapshot = pending;
    pending = undefined;
    if (!snapshot) return;
    const text = `${JSON.stringify({ schema_version: 1, periods: snapshot }, null, 2)}\n`;
    try {
      await mkdir(dirname(path), { recursive: true });
      await writeFile(tmp, text);
      await rename(tmp, path);
    } catch (err) {
      options.logger.error('budget: could not save the budget file', { path, error: String(err) });
    }
  };
  const schedule = (): Promise<void> => {
    if (next) return next;
    if (!running) {
      running = writeOnce().finally(() => {
        running = undefined;
      });
      return running;
    }
    next = running.then(() => {
      next = undefined;
      running = writeOnce().finally(() => {
        running = undefined;
      });
      return running;
    });
    return next;
  };

  /** Removes `<file>.<pid>.tmp` left by a process killed mid-write. */
  const removeOrphans = async (): Promise<void> => {
    const prefix = `${basename(path)}.`;
    const names = await readdir(dirname(path)).catch(() => [] as string[]);
    for (const name of names) {
      const pid = name.startsWith(prefix) ? /^(\d+)\.tmp$/.exec(name.slice(prefix.length))?.[1] : undefined;
      if (pid !== undefined && !processAlive(Number(pid)))
        await unlink(join(dirname(path), name)).catch(() => undefined);
    }
  };

  return {
    async load() {
      await removeOrphans();
      let text: string;
      try {
        text = await readFile(path, 'utf8');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
          options.logger.warn('budget: could not read the budget file; starting from zero spend', {
            path,
            error: String(err),
          });
        }
        return undefined;
      }
      let parsed: BudgetSnapshot | undefined;
      try {
        parsed = parseSnapshot(JSON.parse(text));
      } catch {
        parsed = undefined;
      }
      if (!parsed)
        options.logger.warn('budget: the budget file is malformed; starting from zero spend', { path });
      return parsed;
    },
    write(snapshot) {
      pending = snapshot;
      return schedule();
    },
    async flush() {
      while (running || next) await (next ?? running);
    },
  };
}
