import { exposeGc } from './gc-access.js';

/*
 * Request bodies arrive in socket chunks, buffers outside V8's heap that
 * are garbage as soon as the body is read (joined, or matched with the same
 * bytes kept from before: `PrefixParser.knownBytes`). V8 frees such a buffer
 * when it collects the object that holds it, and counts what it allocated
 * since its last full collection against its old-generation limit. A server
 * that allocates little on V8's heap per request (a memoized turn of a long
 * conversation) collects its young generation rarely, so the chunks of
 * ~350 KB bodies piled up until that limit set off a full mark-compact every
 * 30 requests or so (3-13 ms on the main thread each, and the concurrent
 * marking besides): ~0.4 ms of CPU per request, more than svc's own work.
 * Collecting the young generation after every few MB of bodies frees the
 * chunks for a fraction of that (well under a millisecond each).
 */

/** Bytes of request bodies read between two young-generation collections. */
export const YOUNG_GC_BODY_BYTES = 4 * 1024 * 1024;

/** V8's collector of the young generation (`gc({ type: 'minor' })`), when it can be exposed. */
function minorCollector(): (() => void) | undefined {
  const gc = exposeGc() as ((options?: { type: 'minor' | 'major' }) => void) | undefined;
  return gc && (() => gc({ type: 'minor' }));
}

/**
 * A counter of request-body bytes that collects the young generation once
 * every `every` bytes, right after the work in progress (`setImmediate`:
 * by then the chunks of the body that crossed the line are garbage too).
 * `collect` undefined: nothing happens (no exposable collector).
 */
export function youngCollection(
  collect: (() => void) | undefined,
  every = YOUNG_GC_BODY_BYTES,
): (bytes: number) => void {
  let bytes = 0;
  let pending = false;
  return function bodyRead(n: number) {
    bytes += n;
    if (bytes < every || pending || !collect) return;
    bytes = 0;
    pending = true;
    setImmediate(() => {
      pending = false;
      collect();
    });
  };
}

let shared: ((bytes: number) => void) | undefined;

/** Counts a request body read into the process's young-generation collections (see above). */
export function noteBodyRead(bytes: number): void {
  shared ??= youngCollection(minorCollector());
  shared(bytes);
}
