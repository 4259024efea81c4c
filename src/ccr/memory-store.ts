import { LRUCache } from 'lru-cache';
import { ENTRY_OVERHEAD, stringBytes } from '../engine/memo-budget.js';
import { SvcError } from '../errors.js';
import type { Logger } from '../log.js';
import type { CcrStore } from './store.js';

/** A store that takes the entries the memory store lets go (`svc serve`: its spill file, spill-file.ts). */
export interface SpillStore extends CcrStore {
  /** As `put`, the entry's lifetime counted from `at` (ms) instead of now. */
  put(hash: string, original: string, at?: number): Promise<void>;
}

export interface MemoryCcrStoreOptions {
  /**
   * Maximum estimated bytes (originals as V8 keeps them: one byte a character
   * when all are Latin-1, else two; and the entries). Default 256 MiB here; `svc serve` passes `--ccr-memory-max-bytes`.
   */
  maxSize?: number;
  /** Time to live in ms. Default 24 h. */
  ttlMs?: number;
  /** Clock in ms, for tests. Default: the real clock. */
  now?: () => number;
  /**
   * Where entries past `maxSize` go (`svc serve`: a spill file on disk,
   * opened when first needed): the least recently used are written there in
   * the background, with the rest of their lifetime, and read from there once
   * they are no longer in memory. Memory then decides what is fast to read,
   * the spill store's own bounds what stays redeemable (principle 3).
   * Without it they are dropped, and a batch larger than `maxSize` is refused.
   */
  spill?: () => SpillStore;
  /** Where failed writes to `spill` are reported (at most once a minute). */
  logger?: Logger;
}

/** Writes to the spill store at once; more wait their turn (the file store's I/O runs on libuv's 4 threads). */
const SPILL_WRITES = 2;
const WARN_EVERY_MS = 60_000;

/** What the memory store holds: its entries, and those on their way to the spill store. */
export interface MemoryCcrStore extends CcrStore {
  /** Estimated bytes held in memory: the entries, those not yet written to the spill store, and its index. */
  memoryBytes(): number;
  /** Waits for the entries on their way to the spill store. */
  flush(): Promise<void>;
  /** Waits for them, then closes the spill store. */
  close(): Promise<void>;
}

const entryBytes = (hash: string, original: string): number =>
  stringBytes(original) + stringBytes(hash) + ENTRY_OVERHEAD;

/** An in-memory CCR store: LRU bounded by size, with TTL; optionally spilling to a durable store. */
export function createMemoryCcrStore(options: MemoryCcrStoreOptions = {}): MemoryCcrStore {
  const clock = options.now;
  const now = clock ?? Date.now;
  const maxSize = options.maxSize ?? 256 * 1024 * 1024;
  const ttl = options.ttlMs ?? 24 * 60 * 60 * 1000;
  let spill: SpillStore | undefined;
  const spillStore = options.spill && (() => (spill ??= options.spill!()));
  /** Entries evicted and not yet written, with the time their lifetime started. */
  const outgoing = new Map<string, { original: string; at: number }>();
  let outgoingBytes = 0;
  const queue: string[] = [];
  let writing = 0;
  const idle: Array<() => void> = [];
  let lastWarning = Number.NEGATIVE_INFINITY;
  let failed = 0;

  const written = (hash: string, entry: { original: string }) => {
    if (outgoing.get(hash) === entry) {
      outgoing.delete(hash);
      outgoingBytes -= entryBytes(hash, entry.original);
    }
  };
  const pump = (): void => {
    while (writing < SPILL_WRITES && queue.length > 0) {
      const hash = queue.shift()!;
      const entry = outgoing.get(hash);
      if (!entry) continue;
      writing += 1;
      spillStore!()
        .put(hash, entry.original, entry.at)
        .catch((err: unknown) => {
          failed += 1;
          if (now() - lastWarning >= WARN_EVERY_MS) {
            lastWarning = now();
            options.logger?.warn('CCR store: could not move originals out of memory; they are lost', {
              error: String(err),
              lost: failed,
            });
          }
        })
        .finally(() => {
          written(hash, entry);
          writing -= 1;
          pump();
        });
    }
    if (writing === 0 && queue.length === 0) for (const resolve of idle.splice(0)) resolve();
  };
  const flush = (): Promise<void> =>
    writing === 0 && queue.length === 0 ? Promise.resolve() : new Promise((resolve) => idle.push(resolve));

  const cache = new LRUCache<string, string>({
    maxSize,
    sizeCalculation: (value, key) => entryBytes(key, value),
    ttl,
    // An injected clock must be read on every call, not cached for a millisecond.
    ...(clock ? { perf: { now: clock }, ttlResolution: 0 } : {}),
    ...(spillStore
      ? {
          dispose(value: string, key: string, reason: LRUCache.DisposeReason) {
            if (reason !== 'evict') return;
            // still in the cache's books while it is disposed: what is left of its lifetime
            const left = cache.getRemainingTTL(key);
            if (left <= 0) return;
            const entry = { original: value, at: now() - (ttl - left) };
            if (outgoing.has(key)) written(key, outgoing.get(key)!);
            outgoing.set(key, entry);
            outgoingBytes += entryBytes(key, value);
            queue.push(key);
            pump();
          },
        }
      : {}),
  });

  /**
   * Stores one original; a promise only when the caller has to wait (for the
   * spill store, or for writes to it that fell behind).
   */
  const store = (hash: string, original: string): Promise<void> | undefined => {
    // Held already: a conversation's originals are stored again on each of its turns, which renews
    // their recency and lifetime as setting them would, without measuring the text again.
    if (cache.peek(hash) === original) {
      cache.get(hash, { updateAgeOnGet: true });
      return undefined;
    }
    // lru-cache silently skips an entry larger than the whole cache; a marker
    // pointing at it could never be redeemed (principle 3): store it past
    // memory, or refuse it.
    const bytes = entryBytes(hash, original);
    if (bytes > maxSize) {
      if (spillStore) return spillStore().put(hash, original);
      throw new SvcError(
        'SVC_STORE_UNAVAILABLE',
        `CCR entry of ${original.length} chars (${bytes} bytes) exceeds the store's cap`,
      );
    }
    cache.set(hash, original);
    // Writes falling behind (a slow disk): the caller waits rather than memory growing past the cap.
    return outgoingBytes > maxSize ? flush() : undefined;
  };
  return {
    async put(hash, original) {
      await store(hash, original);
    },
    async putMany(entries) {
      if (!spillStore) {
        // One request's originals must all stay: a batch past the cap would evict its own first entries.
        let bytes = 0;
        for (const hash of entries.keys()) bytes += entryBytes(hash, entries.get(hash)!);
        if (bytes > maxSize)
          throw new SvcError('SVC_STORE_UNAVAILABLE', `CCR entries of ${bytes} bytes exceed the store's cap`);
      }
      // by key (a request's whole conversation is stored again each turn: no [key, value] pair each)
      for (const hash of entries.keys()) {
        const waiting = store(hash, entries.get(hash)!);
        if (waiting) await waiting;
      }
    },
    async get(hash) {
      const held = cache.get(hash) ?? outgoing.get(hash)?.original;
      if (held !== undefined || !spillStore) return held;
      return spillStore().get(hash);
    },
    memoryBytes: () => cache.calculatedSize + outgoingBytes + (spill?.memoryBytes?.() ?? 0),
    flush,
    async close() {
      await flush();
      await spill?.close?.();
    },
  };
}
