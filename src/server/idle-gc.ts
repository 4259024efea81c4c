import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { requestPaths } from '../quiet.js';
import type { ServerContext } from './context.js';
import { releaseFreedMemory } from './malloc.js';

/** How long the server must have finished no request before it collects garbage once. */
export const IDLE_GC_MS = 5_000;

/** The `gc` taken from a fresh context, once (each context costs memory). */
let exposed: (() => void) | undefined;

/**
 * V8's full collection, made available the way test runners do it for leak
 * checks (`--expose-gc` set at run time, `gc` taken from a fresh context);
 * undefined when that is not possible.
 */
export function exposeGc(): (() => void) | undefined {
  const existing = (globalThis as { gc?: () => void }).gc;
  if (existing) return existing;
  if (exposed) return exposed;
  try {
    setFlagsFromString('--expose-gc');
    exposed = runInNewContext('gc') as () => void;
    return exposed;
  } catch {
    return undefined;
  }
}

/**
 * The collection run at idle: two full collections, compacting. A plain full
 * collection frees the garbage but leaves V8's pages committed: the young
 * generation stays at its grown size (32 MB) and old-generation pages
 * holding a few live objects stay (after 20 s of ~91k-token bodies at c=10:
 * heap total 182 MB for 51 MB in use). Compacting moves the survivors
 * together and releases the emptied pages; the second collection, with
 * nothing allocated since the first, lets V8 shrink the young generation
 * (it does when the allocation rate is low). Heap total 80 -> 45 MB in that
 * run, RSS 245 -> 111 MB; the pause is tens of ms, at idle.
 */
export function idleCollection(gc: () => void): () => void {
  return () => {
    let compact = false;
    try {
      setFlagsFromString('--compact-on-every-full-gc');
      compact = true;
    } catch {
      // a V8 without the flag: plain collections
    }
    try {
      gc();
      gc();
    } finally {
      if (compact) setFlagsFromString('--no-compact-on-every-full-gc');
    }
  };
}

function withExposedGc(make: (gc: () => void) => () => void): (() => void) | undefined {
  const gc = exposeGc();
  return gc && make(gc);
}

/** How far past what survived the last full collection V8 lets the old generation grow: 3x. */
const HEAP_GROWING_PERCENT = 200;

/**
 * Whether node was started with its own `--heap-growing-percent` (a flag to
 * node: NODE_OPTIONS does not take it).
 */
export function heapGrowingGiven(execArgv: readonly string[]): boolean {
  return execArgv.some((arg) => /^--heap[-_]growing[-_]percent\b/.test(arg));
}

/**
 * Spaces V8's full collections under a steady load (issue 19). V8 counts the
 * external memory allocated since the last full collection against the old
 * generation's limit, and the Buffers of each request (the socket's chunks of
 * a ~91k-token body, the spliced body sent on: a few hundred KB) wait for a
 * collection to be freed. The limit V8 picks from how fast it collects was
 * ~1.7x the live heap (17 MB live, a 29 MB limit), so those Buffers started
 * the next marking as soon as the last one ended: a full collection every
 * ~35 memoized turns, ~0.4 ms of CPU a turn across threads. With the limit at
 * 3x what survived, the young generation's collections free them first, and
 * full collections come a third as often. The peak heap under a load of new
 * conversations did not grow (`node bench/memory.js`), and the idle
 * collection brings it back down. Set at run time unless node was
 * given its own value; returns whether it was set.
 */
export function paceFullCollections(execArgv: readonly string[] = process.execArgv): boolean {
  if (heapGrowingGiven(execArgv)) return false;
  try {
    setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
    return true;
  } catch {
    return false;
  }
}

/**
 * One idle collection (`idleCollection`) when the server goes idle after work (issue 19):
 * V8 collects its old generation only under allocation pressure, so after a
 * burst of large requests the garbage they left (hundreds of MB after 30 s of
 * ~91k-token bodies) stays in the heap, and in RSS, for as long as no request
 * comes. `IDLE_GC_MS` after the last finished request, with none in flight,
 * it runs one (a pause of tens of ms, when nothing waits), then `release`
 * gives the memory that collection freed outside V8's heap back to the
 * system (malloc.ts). Logged at debug level with the RSS before and
 * after.
 */
export function collectWhenIdle(
  ctx: Pick<ServerContext, 'bus' | 'inFlight' | 'onClose' | 'logger'>,
  collect: (() => void) | undefined = withExposedGc(idleCollection),
  idleMs = IDLE_GC_MS,
  release: () => boolean = releaseFreedMemory,
): void {
  if (!collect) return;
  let last = 0;
  let timer: NodeJS.Timeout | undefined;
  const check = () => {
    timer = undefined;
    const waited = Date.now() - last;
    if (waited < idleMs || ctx.inFlight.size > 0) {
      timer = setTimeout(check, Math.max(10, idleMs - waited)).unref();
      return;
    }
    const before = process.memoryUsage.rss();
    collect();
    const released = release();
    if (ctx.logger.enabled?.('debug') !== false) {
      const mb = (bytes: number) => Math.round(bytes / 1e5) / 10;
      ctx.logger.debug('idle: garbage collected', {
        rss_mb_before: mb(before),
        rss_mb_after: mb(process.memoryUsage.rss()),
        freed_memory_returned: released,
      });
    }
  };
  ctx.bus.on('request.finished', () => {
    last = Date.now();
    timer ??= setTimeout(check, idleMs).unref();
  });
  ctx.onClose.push(() => {
    if (timer) clearTimeout(timer);
    timer = undefined;
  });
}

/** V8's `gc` with its options: `{ type: 'minor' }` collects the young generation only. */
type GcWithOptions = (options?: { type?: 'minor' | 'major' }) => void;

/**
 * V8's young-generation collection (a scavenge), through the exposed `gc`
 * (`exposeGc`); undefined when that is not possible.
 */
export function exposeScavenge(): (() => void) | undefined {
  const gc = exposeGc() as GcWithOptions | undefined;
  return gc && (() => gc({ type: 'minor' }));
}

/** V8's young generation now: the bytes it holds and the bytes it takes before it must be collected. */
export function youngGeneration(): { used: number; capacity: number } | undefined {
  for (const space of getHeapSpaceStatistics())
    if (space.space_name === 'new_space')
      return { used: space.space_used_size, capacity: space.space_used_size + space.space_available_size };
  return undefined;
}

/**
 * Young-generation collections between requests instead of on their path
 * (issue 19). V8 collects its young generation when it is full, at whatever
 * point of whichever request fills it: a new ~91k-token conversation
 * allocates ~9 MB on its way upstream, so more than a third of them paused
 * for a scavenge before they were forwarded (~3 ms each, and V8's helper
 * threads with it), copying that request's live objects, the parsed body
 * among them. Here, once a request has finished (its stats counted) and
 * none is running, the young generation is collected if it is at least half
 * full: the next request starts with at least half of it free, the objects
 * copied are only those that outlive their request (what the memos keep for
 * later turns), and the pause falls where nobody waits (two servers taking
 * turns on new ~91k conversations: ~0.5 ms less CPU before forwarding,
 * docs/perf.md).
 * Under a steady load no request finishes with none running, and V8
 * collects as it would; a server of small or memoized requests fills half
 * its young generation over many of them, so this adds at most one
 * collection to each one V8 would have made.
 */
export function scavengeWhenIdle(
  ctx: Pick<ServerContext, 'bus' | 'inFlight' | 'onClose'>,
  scavenge: (() => void) | undefined = exposeScavenge(),
  young: () => { used: number; capacity: number } | undefined = youngGeneration,
): void {
  if (!scavenge) return;
  let check: NodeJS.Immediate | undefined;
  let failed = false;
  const run = () => {
    check = undefined;
    if (failed || ctx.inFlight.size > 0 || requestPaths.size > 0) return;
    const now = young();
    if (!now || now.used * 2 < now.capacity) return;
    try {
      scavenge();
    } catch {
      failed = true; // a V8 whose gc takes no options: V8 collects as it would
    }
  };
  // after the finished request has left `inFlight` (it does once the event is out)
  ctx.bus.on('request.finished', () => {
    check ??= setImmediate(run).unref();
  });
  ctx.onClose.push(() => {
    if (check) clearImmediate(check);
    check = undefined;
  });
}
