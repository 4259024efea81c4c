import { readdir, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { isContentHash } from '../engine/hash.js';

/** What one sweep of the file store did. */
export interface SweepReport {
  /** Entries left. */
  entries: number;
  /** Bytes left. */
  bytes: number;
  expired: number;
  evicted: number;
}

export interface SweepOptions {
  dir: string;
  ttlMs: number;
  maxBytes: number;
  /** Current time in ms. */
  now: number;
}

/** Past the cap, evict down to this share of it, so the next writes do not sweep again at once. */
const LOW_WATER = 0.9;
/**
 * Where writers put an entry before renaming it into its shard (same file system, so the rename is
 * atomic). Versions before it wrote beside the entry, in the shard: the sweep still removes those.
 */
export const TEMP_FOLDER = 'tmp';
/** A temporary file older than this was left by a crashed writer. */
const STALE_TMP_MS = 60 * 60 * 1000;
const SHARD_RE = /^[0-9a-f]{2}$/;
/** `<hash>.tmp-<pid>-<random>`: the writer's process id. */
const TMP_PID_RE = /\.tmp-(\d+)-[0-9a-f]+$/;

/** True when process `pid` is running (on this machine; a process of another user counts as running). */
export function processAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * True when a temporary file of the store was left by a writer that will never rename it: its
 * process is gone (killed, crashed), or, for a name without a process id or one on another machine
 * sharing the folder, it is over an hour old.
 */
export function orphanTemp(name: string, mtimeMs: number, now: number): boolean {
  if (!name.includes('.tmp-')) return false;
  const pid = TMP_PID_RE.exec(name)?.[1];
  if (pid !== undefined && !processAlive(Number(pid))) return true;
  return now - mtimeMs > STALE_TMP_MS;
}

interface Entry {
  path: string;
  size: number;
  mtimeMs: number;
}

async function listShard(shard: string, now: number, ttlMs: number, report: SweepReport): Promise<Entry[]> {
  const names = await readdir(shard).catch(() => [] as string[]);
  const entries: Entry[] = [];
  await Promise.all(
    names.map(async (name) => {
      const path = join(shard, name);
      const st = await stat(path).catch(() => undefined);
      if (!st?.isFile()) return;
      if (!isContentHash(name)) {
        if (orphanTemp(name, st.mtimeMs, now)) await unlink(path).catch(() => undefined);
        return;
      }
      if (now - st.mtimeMs > ttlMs) {
        await unlink(path).catch(() => undefined);
        report.expired++;
        return;
      }
      entries.push({ path, size: st.size, mtimeMs: st.mtimeMs });
    }),
  );
  return entries;
}

/**
 * One pass over a file CCR store's folder: deletes expired entries and
 * leftover temporary files (in the shards, from older versions, and in
 * `TEMP_FOLDER`), then, while the folder is over `maxBytes`,
 * deletes the least recently written entries. Safe to run from several
 * processes at once (a file deleted twice is simply gone).
 */
export async function sweepCcrFolder(options: SweepOptions): Promise<SweepReport> {
  const { dir, ttlMs, maxBytes, now } = options;
  const report: SweepReport = { entries: 0, bytes: 0, expired: 0, evicted: 0 };
  const shards = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const entries: Entry[] = [];
  for (const shard of shards) {
    if (!shard.isDirectory() || !SHARD_RE.test(shard.name)) continue;
    entries.push(...(await listShard(join(dir, shard.name), now, ttlMs, report)));
  }
  await sweepOrphanTemps(dir, now);
  let total = entries.reduce((sum, e) => sum + e.size, 0);
  if (total > maxBytes) {
    entries.sort((a, b) => a.mtimeMs - b.mtimeMs || a.path.localeCompare(b.path));
    let i = 0;
    while (total > maxBytes * LOW_WATER && i < entries.length) {
      const victim = entries[i++]!;
      await unlink(victim.path).catch(() => undefined);
      total -= victim.size;
      report.evicted++;
    }
    entries.splice(0, i);
  }
  report.entries = entries.length;
  report.bytes = total;
  return report;
}

/**
 * Deletes the temporary files that writers killed mid-write left in the store's temporary folder
 * (`TEMP_FOLDER`; their process is gone, or they are over an hour old): run when a store opens, so
 * a crash leaves no files behind past the next start, and by every sweep. One folder to list, so
 * opening a full store (each `svc compress` does) costs one `readdir`, not one per shard (256,
 * ~25 ms with 20,000 entries). Touches nothing else; returns how many it deleted.
 */
export async function sweepOrphanTemps(dir: string, now: number): Promise<number> {
  const folder = join(dir, TEMP_FOLDER);
  const names = await readdir(folder).catch(() => [] as string[]);
  const removed = await Promise.all(
    names.map(async (name) => {
      const path = join(folder, name);
      const st = await stat(path).catch(() => undefined);
      if (!st?.isFile() || !orphanTemp(name, st.mtimeMs, now)) return 0;
      return unlink(path).then(
        () => 1,
        () => 0,
      );
    }),
  );
  return removed.reduce<number>((a, b) => a + b, 0);
}
