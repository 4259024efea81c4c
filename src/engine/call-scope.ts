/**
 * Memos that live for one engine call (`compressMessages`): within a call the
 * router, the compressors and the history scans ask the same questions of
 * the same texts (is it JSON, which identifiers does this line hold), and a
 * call-scoped answer costs a map lookup; nothing is kept between requests.
 * Calls may nest (the context manager compresses again inside a call): the
 * memos are emptied when the outermost call ends.
 */

const clearers: Array<() => void> = [];
let depth = 0;

/** Starts an engine call. */
export function beginCall(): void {
  depth += 1;
}

/** Ends it: when it was the outermost, every call-scoped memo is emptied. */
export function endCall(): void {
  depth = Math.max(0, depth - 1);
  if (depth === 0) for (const clear of clearers) clear();
}

/** True inside an engine call (outside one, memos are not filled: nothing would empty them). */
export function inCall(): boolean {
  return depth > 0;
}

/** A map emptied when the outermost engine call ends. */
export function callScopedMap<K, V>(): Map<K, V> {
  return callScoped(new Map<K, V>());
}

/** `memo`, emptied when the outermost engine call ends. */
export function callScoped<T extends { clear(): void }>(memo: T): T {
  clearers.push(() => memo.clear());
  return memo;
}
