import { randomBytes } from 'node:crypto';
import { type FileHandle, mkdir, open, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { ENTRY_OVERHEAD } from '../engine/memo-budget.js';
import type { SpillStore } from './memory-store.js';

export interface SpillFileOptions {
  /** Folder the file is opened in (`svc serve`: the CCR folder, `SERVICE_CCR_PATH`). */
  dir: string;
  /** Bytes of originals kept on disk. */
  maxBytes: number;
  /** Entries kept (each costs its index entry in memory, `INDEX_ENTRY_BYTES`). */
  maxEntries: number;
  /** Time to live in ms, counted from the entry's `at`. */
  ttlMs: number;
  now?: () => number;
}

/** Bytes of one index entry: its hash string (24 characters), its record and the map's slot. */
export const INDEX_ENTRY_BYTES = 40 + 56 + ENTRY_OVERHEAD;

interface Generation {
  file: FileHandle;
  size: number;
  entries: number;
  closed: boolean;
}

interface Ref {
  gen: Generation;
  offset: number;
  length: number;
  at: number;
}

/**
 * Where the server's memory store puts the originals it evicts (issue 19):
 * an append-only file of this process, unlinked as soon as it is opened (the
 * system frees it when the process ends, even after a crash), read back by
 * offset. One write a batch of entries, not a file each: creating a file
 * costs ~1 ms of CPU here, an append tens of microseconds. An index in memory
 * keeps where each entry is and when its lifetime started. Two generations of
 * up to half the bounds each: when the current one is full, the older one is
 * closed and its entries forgotten (the oldest go first, as past any cap).
 */
export function createSpillFile(
  options: SpillFileOptions,
): SpillStore & { memoryBytes(): number; close(): Promise<void> } {
  const now = options.now ?? Date.now;
  const index = new Map<string, Ref>();
  let current: Promise<Generation> | undefined;
  let older: Generation | undefined;
  let chain: Promise<unknown> = Promise.resolve();

  const openGeneration = async (): Promise<Generation> => {
    await mkdir(options.dir, { recursive: true, mode: 0o700 });
    const path = join(options.dir, `.spill-${process.pid}-${randomBytes(6).toString('hex')}`);
    const file = await open(path, 'a+', 0o600);
    await unlink(path);
    return { file, size: 0, entries: 0, closed: false };
  };
  const retire = async (gen: Generation): Promise<void> => {
    gen.closed = true;
    for (const [hash, ref] of index) if (ref.gen === gen) index.delete(hash);
    await gen.file.close();
  };
  /** The generation to append `length` bytes to, a new one when the current is full. */
  const generationFor = async (length: number): Promise<Generation> => {
    current ??= openGeneration();
    const gen = await current;
    if (
      gen.entries === 0 ||
      (gen.size + length <= options.maxBytes / 2 && gen.entries + 1 <= options.maxEntries / 2)
    )
      return gen;
    const previous = older;
    older = gen;
    current = openGeneration();
    if (previous) await retire(previous);
    return current;
  };

  const append = async (hash: string, original: string, at: number): Promise<void> => {
    const length = Buffer.byteLength(original);
    const gen = await generationFor(length);
    const offset = gen.size;
    // a string is written from a buffer the write owns and frees when done (no garbage left for the GC)
    const { bytesWritten } = await gen.file.write(original, null, 'utf8');
    gen.size += bytesWritten;
    if (bytesWritten !== length)
      throw new Error(`short write to the CCR spill file (${bytesWritten} of ${length})`);
    gen.entries += 1;
    index.delete(hash); // the newest copy wins, and goes last in the index's order
    index.set(hash, { gen, offset, length, at });
  };

  return {
    put(hash, original, at = now()) {
      const done = chain.then(() => append(hash, original, at));
      chain = done.catch(() => undefined);
      return done;
    },
    async get(hash) {
      const ref = index.get(hash);
      if (!ref || ref.gen.closed) return undefined;
      if (now() - ref.at > options.ttlMs) {
        index.delete(hash);
        return undefined;
      }
      const buf = Buffer.allocUnsafe(ref.length);
      try {
        const { bytesRead } = await ref.gen.file.read(buf, 0, ref.length, ref.offset);
        if (bytesRead === ref.length) return buf.toString('utf8');
      } catch (err) {
        if (!ref.gen.closed) throw err;
      }
      return undefined; // its generation was retired meanwhile
    },
    memoryBytes: () => index.size * INDEX_ENTRY_BYTES,
    async close() {
      await chain;
      const gens = [older, current && (await current)];
      for (const gen of gens) if (gen && !gen.closed) await retire(gen);
    },
  };
}
