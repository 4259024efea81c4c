import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { isContentHash } from '../engine/hash.js';
import { SvcError } from '../errors.js';
import { createLogger, type Logger } from '../log.js';
import type { CcrStore } from './store.js';
import { type SweepReport, sweepCcrFolder, sweepOrphanTemps, TEMP_FOLDER } from './sweep.js';

/** Default size cap of the file store: 512 MiB. */
export const DEFAULT_CCR_MAX_BYTES = 512 * 1024 * 1024;
/** Default time between sweeps (expiry and size cap), shared by all processes through a stamp file. */
export const DEFAULT_SWEEP_INTERVAL_MS = 10 * 60 * 1000;
const TMP_MARK = '.tmp-';
const STAMP = '.last-sweep';

export interface FileCcrStoreOptions {
  /** Folder of the store, e.g. `~/.svc/ccr`. Created on the first write. */
  dir: string;
  /** Time to live in ms, counted from the last write of an entry. */
  ttlMs: number;
  /** Size cap in bytes (default 512 MiB); a sweep evicts the oldest entries past it. */
  maxBytes?: number;
  /** Clock in ms, for tests. */
  now?: () => number;
  /**
   * Least time between sweeps (default 10 min, across processes). 0 sweeps
   * after every write, inside `put` (tests); otherwise sweeps run in the
   * background and `close()` waits for them.
   */
  sweepIntervalMs?: number;
  /** Where background sweep failures are reported. Default: warnings on stderr. */
  logger?: Logger;
}

/** The durable CCR store, plus its maintenance entry point. */
export interface FileCcrStore extends CcrStore {
  readonly dir: string;
  /** Deletes expired entries, then the oldest ones while the folder is over the cap. */
  sweep(): Promise<SweepReport>;
  /** Waits for a background sweep to finish. */
  close(): Promise<void>;
}

function errorCode(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

/**
 * A content-addressed CCR store on disk. Each original is one file
 * `<dir>/<hash[0..2]>/<hash>` holding exactly the original text (UTF-8);
 * its mtime is the time of its last write, which the TTL counts from.
 * Writes go to a temporary file in `<dir>/tmp` renamed into place, so a reader never sees a
 * partial entry and several processes can share the folder. Entries survive
 * restarts until they expire or are evicted past the size cap.
 *
 * @example
 * const store = createFileCcrStore({ dir: config.ccrPath, ttlMs: config.ccrTtl * 1000 });
 * await store.put(hash, original);
 * await store.close();
 */
export function createFileCcrStore(options: FileCcrStoreOptions): FileCcrStore {
  const { dir, ttlMs } = options;
  const maxBytes = options.maxBytes ?? DEFAULT_CCR_MAX_BYTES;
  const now = options.now ?? Date.now;
  const interval = options.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS;
  const logger = options.logger ?? createLogger({ level: 'warn' });
  const stampPath = join(dir, STAMP);
  const tempDir = join(dir, TEMP_FOLDER);
  let writtenSinceSweep = 0;
  let lastStampCheck = Number.NEGATIVE_INFINITY;
  let sweeping: Promise<SweepReport> | undefined;
  // Temporary files of writers killed mid-write (kill -9, crash) go when the store opens.
  const orphans = sweepOrphanTemps(dir, now()).then(
    (removed) => {
      if (removed > 0)
        logger.info(`CCR store: removed ${removed} temporary file(s) left by a crash`, { dir });
    },
    (err: unknown) =>
      logger.warn('CCR store: could not remove leftover temporary files', { dir, error: String(err) }),
  );

  const pathFor = (hash: string): string => {
    // Validating the name also keeps a hash from escaping the folder.
    if (!isContentHash(hash)) throw new SvcError('SVC_BAD_INPUT', `not a CCR hash: "${hash.slice(0, 40)}"`);
    return join(dir, hash.slice(0, 2), hash);
  };

  const startSweep = (): Promise<SweepReport> => {
    sweeping ??= (async () => {
      try {
        const report = await sweepCcrFolder({ dir, ttlMs, maxBytes, now: now() });
        await mkdir(dir, { recursive: true, mode: 0o700 });
        await writeFile(stampPath, '');
        const at = new Date(now());
        await utimes(stampPath, at, at);
        return report;
      } finally {
        writtenSinceSweep = 0;
        sweeping = undefined;
      }
    })();
    return sweeping;
  };

  const sweep = async (): Promise<SweepReport> => {
    await sweeping?.catch(() => undefined);
    return startSweep();
  };

  const sweepIfDue = async (): Promise<void> => {
    if (interval === 0) {
      await startSweep();
      return;
    }
    let due = writtenSinceSweep >= maxBytes / 8;
    if (!due && now() - lastStampCheck >= interval) {
      lastStampCheck = now();
      const st = await stat(stampPath).catch(() => undefined);
      due = !st || now() - st.mtimeMs >= interval;
    }
    if (due && !sweeping) {
      startSweep().catch((err: unknown) =>
        logger.warn('CCR store sweep failed', { dir, error: String(err) }),
      );
    }
  };

  return {
    dir,
    sweep,
    async put(hash, original) {
      const file = pathFor(hash);
      const at = new Date(now());
      const size = Buffer.byteLength(original);
      if (size > maxBytes) {
        // Stored, it would be evicted by the next sweep: refuse it so the caller keeps the original.
        throw new SvcError(
          'SVC_STORE_UNAVAILABLE',
          `CCR entry of ${size} bytes exceeds the store's cap of ${maxBytes}`,
        );
      }
      try {
        const existing = await stat(file).catch((err: unknown) => {
          if (errorCode(err) === 'ENOENT') return undefined;
          throw err;
        });
        // Same content (same hash, same size): only its lifetime restarts, unless a
        // sweep deleted it in the meantime.
        const refreshed =
          existing?.size === size &&
          (await utimes(file, at, at).then(
            () => true,
            (err: unknown) => {
              if (errorCode(err) === 'ENOENT') return false;
              throw err;
            },
          ));
        if (!refreshed) {
          await mkdir(dirname(file), { recursive: true, mode: 0o700 });
          await mkdir(tempDir, { recursive: true, mode: 0o700 });
          const tmp = join(tempDir, `${hash}${TMP_MARK}${process.pid}-${randomBytes(4).toString('hex')}`);
          try {
            await writeFile(tmp, original, { flag: 'wx', mode: 0o600 });
            await utimes(tmp, at, at);
            await rename(tmp, file);
          } catch (err) {
            await unlink(tmp).catch(() => undefined);
            throw err;
          }
          writtenSinceSweep += size;
        }
      } catch (err) {
        throw new SvcError(
          'SVC_STORE_UNAVAILABLE',
          `cannot write the CCR store at ${dir} (${errorCode(err) ?? String(err)})`,
          {
            cause: err,
          },
        );
      }
      await sweepIfDue();
    },
    async get(hash) {
      if (!isContentHash(hash)) return undefined;
      const file = pathFor(hash);
      try {
        const st = await stat(file);
        if (now() - st.mtimeMs > ttlMs) {
          await unlink(file).catch(() => undefined);
          return undefined;
        }
        return await readFile(file, 'utf8');
      } catch (err) {
        if (errorCode(err) === 'ENOENT') return undefined;
        throw new SvcError(
          'SVC_STORE_UNAVAILABLE',
          `cannot read the CCR store at ${dir} (${errorCode(err) ?? String(err)})`,
          {
            cause: err,
          },
        );
      }
    },
    async close() {
      await orphans;
      await sweeping?.catch(() => undefined);
    },
  };
}
