import { LRUCache } from 'lru-cache';
import type { CacheMode } from './cache-key.js';

/** One stored answer: a whole JSON body, or the bytes of a stream that ended cleanly. */
export interface CachedResponse {
  mode: CacheMode;
  status: number;
  /** Headers replayed with the answer (content type and encoding only; see `CACHED_HEADERS`). */
  headers: Record<string, string>;
  /** The body as the upstream sent it; for `sse`, every event in order, final event included. */
  body: Buffer;
  /** Model named in the request, for stats on a hit. */
  model: string | undefined;
  /** When it was stored (ms since epoch). */
  storedAt: number;
}

/** Counters of a response cache, for `/stats` (`cache.entries`, `cache.total_hits`). */
export interface ResponseCacheStats {
  /** Live entries (expired ones are not counted). */
  entries: number;
  /** Bytes held by live entries. */
  bytes: number;
  hits: number;
  misses: number;
  /** Entries pushed out by the entry or byte bound (not by expiry). */
  evictions: number;
}

/**
 * The response cache. Async so that a shared (Redis) implementation can
 * replace the in-memory one without touching callers.
 */
export interface ResponseCache {
  /** The entry under `key`, or undefined (counted as a miss). */
  get(key: string): Promise<CachedResponse | undefined>;
  /**
   * Stores an answer. Returns false, storing nothing, when it is not
   * cacheable: a status other than 200, or larger than the byte bound.
   */
  set(key: string, value: CachedResponse): Promise<boolean>;
  stats(): Promise<ResponseCacheStats>;
  /**
   * The counters without waiting, for synchronous readers (`/stats`,
   * `/metrics`): exact for the in-memory cache, the last ones fetched for a
   * shared one.
   */
  peekStats(): ResponseCacheStats;
  clear(): Promise<void>;
}

/** Upstream headers worth replaying; the rest (dates, request ids, provider rate limits) describe the original call. */
export const CACHED_HEADERS: readonly string[] = ['content-type', 'content-encoding'];

export interface MemoryResponseCacheOptions {
  /** Most entries kept (LRU beyond). */
  maxEntries: number;
  /** Time to live in seconds. */
  ttlS: number;
  /** Most bytes kept over all entries (LRU beyond); one larger answer is not stored. */
  maxBytes: number;
  /** Clock in ms; injectable for tests. */
  now?: () => number;
}

/** Fixed per-entry overhead counted against the byte bound (key, object, bookkeeping). */
const ENTRY_OVERHEAD = 256;

/** Bytes an entry is charged against the byte bound. */
export function cachedResponseSize(value: CachedResponse): number {
  let size = ENTRY_OVERHEAD + value.body.length + (value.model?.length ?? 0);
  for (const [name, v] of Object.entries(value.headers)) size += name.length + v.length;
  return size;
}

/** Keeps only the headers of `CACHED_HEADERS` (lower-cased names). */
export function cacheableHeaders(
  headers: Record<string, string | string[] | number | undefined>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (value === undefined || !CACHED_HEADERS.includes(lower)) continue;
    out[lower] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  return out;
}

/**
 * The in-memory response cache: lru-cache bounded by entries, bytes and TTL,
 * on an injectable clock.
 *
 * @example createMemoryResponseCache({ maxEntries: 1000, ttlS: 3600, maxBytes: 256 << 20 })
 */
export function createMemoryResponseCache(options: MemoryResponseCacheOptions): ResponseCache {
  const now = options.now ?? Date.now;
  const counters = { hits: 0, misses: 0, evictions: 0 };
  const lru = new LRUCache<string, CachedResponse>({
    max: options.maxEntries,
    maxSize: options.maxBytes,
    sizeCalculation: cachedResponseSize,
    ttl: options.ttlS * 1000,
    // Read the clock on every check: the default caches it for 1 ms of real time,
    // which an injected test clock would outrun.
    ttlResolution: 0,
    perf: { now },
    dispose: (_value, _key, reason) => {
      if (reason === 'evict') counters.evictions += 1;
    },
  });
  const statsNow = (): ResponseCacheStats => {
    lru.purgeStale();
    return { entries: lru.size, bytes: lru.calculatedSize, ...counters };
  };
  return {
    async get(key) {
      const hit = lru.get(key);
      if (hit) counters.hits += 1;
      else counters.misses += 1;
      return hit;
    },
    async set(key, value) {
      if (value.status !== 200) return false;
      if (cachedResponseSize(value) > options.maxBytes) return false;
      lru.set(key, value);
      return lru.has(key);
    },
    async stats() {
      return statsNow();
    },
    peekStats() {
      return statsNow();
    },
    async clear() {
      lru.clear();
    },
  };
}
