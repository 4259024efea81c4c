/**
 * The CCR store: originals of everything the engine removed, by content hash.
 * Implementations: memory (LRU with TTL), file (~/.svc/ccr), redis.
 */
export interface CcrStore {
  /** Stores `original` under `hash` (as computed by `contentHash`). Idempotent. */
  put(hash: string, original: string): Promise<void>;
  /**
   * Stores every entry (as `put` does for each), when the store can do it in
   * one step; `putAll` uses it. The proxy re-stores a conversation's entries on
   * every turn (their lifetime restarts), so this keeps that cheap.
   */
  putMany?(entries: ReadonlyMap<string, string>): Promise<void>;
  /** The original, or undefined when unknown or expired. */
  get(hash: string): Promise<string | undefined>;
  /** Releases resources (timers, connections). */
  close?(): Promise<void>;
  /** Estimated bytes this process holds for the store (in-memory stores only; `/metrics`). */
  memoryBytes?(): number;
}

/** Writes every entry of an engine output; throws if any write fails. */
export async function putAll(store: CcrStore, entries: Map<string, string>): Promise<void> {
  if (store.putMany) return store.putMany(entries);
  await Promise.all([...entries].map(([hash, original]) => store.put(hash, original)));
}
