import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, stat, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Adapter } from 'lowdb';
import type { Logger } from '../log.js';
import type { SavingsData } from './savings-data.js';
import { MalformedSavingsError, parseSavingsData } from './savings-validate.js';

/** What reading the savings file found. */
export type SavingsReadResult =
  | { state: 'ok'; data: SavingsData }
  | { state: 'missing' }
  | { state: 'malformed'; reason: string };

/** Reads and validates the file without changing anything on disk. */
export async function readSavingsData(path: string, now: number): Promise<SavingsReadResult> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { state: 'missing' };
    throw err;
  }
  try {
    return { state: 'ok', data: parseSavingsData(JSON.parse(text), now) };
  } catch (err) {
    if (err instanceof SyntaxError || err instanceof MalformedSavingsError) {
      return { state: 'malformed', reason: err.message };
    }
    throw err;
  }
}

/**
 * Reads the savings file for views, re-parsing only when the file changed
 * (inode, mtime or size: every write is a rename, so a new file). Results are
 * shared between callers: never mutate them.
 */
export class CachedSavingsReader {
  private cached: { key: string; result: SavingsReadResult } | undefined;

  constructor(readonly path: string) {}

  async read(now: number): Promise<SavingsReadResult> {
    let key: string;
    try {
      const st = await stat(this.path);
      key = `${st.ino}:${st.mtimeMs}:${st.size}`;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { state: 'missing' };
      throw err;
    }
    if (this.cached?.key === key) return this.cached.result;
    const result = await readSavingsData(this.path, now);
    this.cached = { key, result };
    return result;
  }
}

/** Writes `text` to `path` atomically: a unique temp file, fsync, rename over the target. */
export async function writeFileAtomic(path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    const handle = await open(tmp, 'w', 0o600);
    try {
      await handle.writeFile(text, 'utf8');
      await handle.datasync();
    } finally {
      await handle.close();
    }
    await rename(tmp, path);
  } catch (err) {
    await unlink(tmp).catch(() => {});
    throw err;
  }
}

/** File-system-safe UTC stamp: `2026-03-02T10-04-05-123Z`. */
function stamp(now: number): string {
  return new Date(now).toISOString().replace(/[:.]/g, '-');
}

/** An array of exactly four numbers as `JSON.stringify(_, null, 1)` lays it out (one per line). */
const FOUR_NUMBERS = /\[\s+(-?[\d.e+-]+),\s+(-?[\d.e+-]+),\s+(-?[\d.e+-]+),\s+(-?[\d.e+-]+)\s+\]/g;

/**
 * lowdb adapter for the savings file. Reads validate the content; a malformed
 * file is moved aside to `<path>.corrupt-<UTC stamp>` with a warning and read
 * as absent, so a fresh file is begun. Writes are atomic (temp + rename), so a
 * reader never sees half a file. Use only while holding the file's lock.
 */
export class SavingsFileAdapter implements Adapter<SavingsData> {
  /** Set when the last read moved a malformed file aside. */
  movedAside: string | undefined;

  constructor(
    readonly path: string,
    private readonly now: () => number,
    private readonly logger: Logger,
  ) {}

  async read(): Promise<SavingsData | null> {
    this.movedAside = undefined;
    const found = await readSavingsData(this.path, this.now());
    if (found.state === 'ok') return found.data;
    if (found.state === 'missing') return null;
    const aside = `${this.path}.corrupt-${stamp(this.now())}-${process.pid}`;
    await rename(this.path, aside);
    this.movedAside = aside;
    this.logger.warn('savings file was malformed: moved aside, starting a fresh one', {
      path: this.path,
      moved_to: aside,
      reason: found.reason,
    });
    return null;
  }

  async write(data: SavingsData): Promise<void> {
    // The `by` rows (4 numbers each) on one line: a third of the file's size at its bounds.
    const text = JSON.stringify(data, null, 1).replace(FOUR_NUMBERS, '[$1,$2,$3,$4]');
    await writeFileAtomic(this.path, `${text}\n`);
  }
}
