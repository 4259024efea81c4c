import type { ShapeObservation, ToinAdvice } from '../engine/context/types.js';
import type { Logger } from '../log.js';
import type { SharedStore } from '../store/redis.js';
import { adviceFrom } from './advice.js';
import { toinCommands } from './redis-store-script.js';
import { newObservationFilter, type ToinStore } from './store.js';
import { emptyToin, MAX_HASHES, MAX_SHAPES, type ShapeRecord, type ToinData } from './types.js';

/** How long the fleet remembers that a piece of content was counted (s). */
const SEEN_TTL_S = 24 * 3600;
/** Most operations kept while the store is unreachable (oldest dropped beyond). */
const MAX_PENDING = 50_000;

type Op =
  | {
      k: 'o';
      event: string;
      shape: string;
      tool: string;
      fields: string;
      nf: number;
      hashes: string[];
      at: string;
      ms: number;
    }
  | { k: 'r'; hash: string; fields: string[]; at: string; ms: number };

/** Options of `openRedisToinStore`. */
export interface RedisToinStoreOptions {
  now?: () => number;
  logger: Logger;
  /** Pending counts are sent this long after the first one (ms). Default 1000. */
  flushDelayMs?: number;
  /** What other replicas learned is read this often (ms). Default 10000; 0: only after a flush. */
  refreshMs?: number;
}

/** The Redis TOIN store plus its shutdown. */
export interface RedisToinStore extends ToinStore {
  /** Sends what is pending and stops the timers. */
  close(): Promise<void>;
}

function recordFrom(h: Record<string, string>): ShapeRecord | undefined {
  if (!h.tool) return undefined;
  const retrievedFields: Record<string, number> = {};
  for (const [name, value] of Object.entries(h))
    if (name.startsWith('f:')) retrievedFields[name.slice(2)] = Number(value);
  let fields: string[] = [];
  try {
    fields = JSON.parse(h.fields ?? '[]') as string[];
  } catch {
    // a malformed list reads as none
  }
  return {
    tool: h.tool,
    fields,
    compressed: Number(h.compressed ?? 0),
    dropped: Number(h.dropped ?? 0),
    retrieved: Number(h.retrieved ?? 0),
    retrievedFields,
    firstSeen: h.firstSeen ?? '',
    lastSeen: h.lastSeen ?? '',
  };
}

/**
 * TOIN in Redis, shared by the fleet: every replica's compressions, drops
 * and retrievals add to the same per-shape counters (HINCRBY inside one Lua
 * script per batch), and each replica's advice comes from the fleet's
 * counts. Counts are sent in batches (`flushDelayMs`) and kept while Redis
 * is unreachable; advice then comes from the last state read.
 */
export async function openRedisToinStore(
  store: SharedStore,
  options: RedisToinStoreOptions,
): Promise<RedisToinStore> {
  const now = options.now ?? Date.now;
  const { logger } = options;
  const cmd = toinCommands(store.redis);
  const p = store.key('toin', '');
  let state: ToinData = emptyToin(new Date(now()));
  let advice: ToinAdvice | undefined;
  let pending: Op[] = [];
  let timer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> = Promise.resolve();
  const isNew = newObservationFilter();

  const bumpLocal = (shape: string, tool: string, fields: string[], change: Partial<ShapeRecord>) => {
    const at = new Date(now()).toISOString();
    const r = state.shapes[shape] ?? {
      tool,
      fields,
      compressed: 0,
      dropped: 0,
      retrieved: 0,
      retrievedFields: {},
      firstSeen: at,
      lastSeen: at,
    };
    r.compressed += change.compressed ?? 0;
    r.dropped += change.dropped ?? 0;
    r.retrieved += change.retrieved ?? 0;
    for (const [f, n] of Object.entries(change.retrievedFields ?? {}))
      r.retrievedFields[f] = (r.retrievedFields[f] ?? 0) + n;
    if (fields.length > r.fields.length) r.fields = fields;
    r.lastSeen = at;
    state.shapes[shape] = r;
    advice = undefined;
  };
  const push = (op: Op) => {
    pending.push(op);
    if (pending.length > MAX_PENDING) pending.splice(0, pending.length - MAX_PENDING);
    if (!timer) {
      timer = setTimeout(() => {
        timer = undefined;
        void flushChained().catch(() => undefined);
      }, options.flushDelayMs ?? 1000);
      timer.unref();
    }
  };

  const pull = async (): Promise<void> => {
    const names = await store.redis.zrevrange(`${p}shapes`, 0, MAX_SHAPES - 1);
    const hashes = await Promise.all(names.map((n) => store.redis.hgetall(`${p}s:${n}`)));
    const shapes: Record<string, ShapeRecord> = {};
    names.forEach((name, i) => {
      const r = recordFrom(hashes[i] ?? {});
      if (r) shapes[name] = r;
    });
    state = { schema_version: 1, updated_at: new Date(now()).toISOString(), shapes, hashes: state.hashes };
    advice = undefined;
  };

  const flushNow = async (): Promise<void> => {
    const taken = pending;
    pending = [];
    if (taken.length > 0) {
      try {
        await cmd.svcToinApply(p, JSON.stringify(taken), MAX_SHAPES, MAX_HASHES, SEEN_TTL_S);
      } catch (err) {
        pending = [...taken, ...pending].slice(-MAX_PENDING);
        throw err;
      }
    }
    await pull();
    // Counts made while this flush ran are not in Redis yet: keep them in the view.
    for (const op of pending) {
      if (op.k === 'o') bumpLocal(op.shape, op.tool, JSON.parse(op.fields) as string[], { [op.event]: 1 });
    }
  };
  const flushChained = (): Promise<void> => {
    flushing = flushing.catch(() => undefined).then(flushNow);
    return flushing;
  };

  try {
    await pull();
  } catch (err) {
    logger.warn('TOIN: could not read the shared state; starting empty', { error: String(err) });
  }
  const refreshMs = options.refreshMs ?? 10_000;
  const refresher =
    refreshMs > 0
      ? setInterval(() => void (store.healthy ? flushChained().catch(() => undefined) : undefined), refreshMs)
      : undefined;
  refresher?.unref();
  const unsubscribe = store.onReconnect(() => {
    if (pending.length > 0) void flushChained().catch(() => undefined);
  });

  return {
    path: `${store.safeUrl} (keys ${p}*)`,
    observe(observations: readonly ShapeObservation[]) {
      const at = new Date(now()).toISOString();
      for (const o of observations) {
        if (!isNew(o)) continue;
        bumpLocal(o.shape, o.tool, o.fields, o.event === 'compressed' ? { compressed: 1 } : { dropped: 1 });
        for (const h of o.hashes) state.hashes[h] = [...new Set([...(state.hashes[h] ?? []), o.shape])];
        const fields = JSON.stringify(o.fields);
        push({
          k: 'o',
          event: o.event,
          shape: o.shape,
          tool: o.tool,
          fields,
          nf: o.fields.length,
          hashes: o.hashes,
          at,
          ms: now(),
        });
      }
    },
    retrieved(hash, fields) {
      push({ k: 'r', hash, fields: [...fields], at: new Date(now()).toISOString(), ms: now() });
      const shapes = state.hashes[hash] ?? [];
      for (const key of shapes) {
        const r = state.shapes[key];
        if (r) bumpLocal(key, r.tool, r.fields, { retrieved: 1 });
      }
      return shapes;
    },
    advice() {
      advice ??= adviceFrom(state);
      return advice;
    },
    data() {
      return state;
    },
    flush: flushChained,
    async close() {
      if (timer) clearTimeout(timer);
      if (refresher) clearInterval(refresher);
      unsubscribe();
      try {
        await flushChained();
      } catch (err) {
        if (pending.length > 0)
          logger.warn('TOIN: counts not sent to the store before exit', {
            pending: pending.length,
            error: String(err),
          });
      }
    },
  };
}
