import { mkdir, rename } from 'node:fs/promises';
import { dirname } from 'node:path';
import { TextFile } from 'lowdb/node';
import lockfile from 'proper-lockfile';
import type { ShapeObservation, ToinAdvice } from '../engine/context/types.js';
import type { Logger } from '../log.js';
import { silentLogger } from '../log.js';
import { lruOfEntries } from '../lru.js';
import { adviceFrom } from './advice.js';
import { emptyToin, MAX_HASHES, MAX_SHAPES, type ShapeRecord, type ToinData } from './types.js';

export interface ToinStoreOptions {
  /** The TOIN file (config `toinPath`). */
  path: string;
  now?: () => number;
  logger?: Logger;
}

/**
 * What TOIN learned, in memory, with changes written to its file on
 * `flush`. Several processes (the proxy, `svc compress`) may share one file:
 * a flush locks it, re-reads it and adds only this process's new counts.
 */
export interface ToinStore {
  readonly path: string;
  /** Records compressions and drops of tool outputs. */
  observe(observations: readonly ShapeObservation[]): void;
  /** Records a retrieval of a CCR entry; returns the shapes it held. */
  retrieved(hash: string, fields: readonly string[]): string[];
  /** Advice for the engine (plain data). */
  advice(): ToinAdvice;
  /** The current state (file plus unsaved changes). */
  data(): ToinData;
  /** Writes unsaved changes to the file. */
  flush(): Promise<void>;
}

type Pending = Pick<ToinData, 'shapes' | 'hashes'>;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function validToin(value: unknown): value is ToinData {
  if (!isRecord(value) || value.schema_version !== 1 || !isRecord(value.shapes) || !isRecord(value.hashes))
    return false;
  return Object.values(value.shapes).every(
    (r) =>
      isRecord(r) &&
      typeof r.tool === 'string' &&
      Array.isArray(r.fields) &&
      [r.compressed, r.dropped, r.retrieved].every((n) => typeof n === 'number') &&
      isRecord(r.retrievedFields),
  );
}

/** Reads a TOIN file: missing -> empty; malformed -> moved aside to `*.corrupt-TIMESTAMP`, empty. */
export async function readToinFile(path: string, now: Date, logger: Logger): Promise<ToinData> {
  const text = await new TextFile(path).read();
  if (text === null) return emptyToin(now);
  try {
    const parsed: unknown = JSON.parse(text);
    if (validToin(parsed)) return parsed;
  } catch {
    // handled below
  }
  const aside = `${path}.corrupt-${now.toISOString().replace(/[:.]/g, '-')}`;
  await rename(path, aside);
  logger.warn('TOIN file was malformed; moved aside and starting empty', { path, movedTo: aside });
  return emptyToin(now);
}

function blankRecord(tool: string, fields: string[], at: string): ShapeRecord {
  return {
    tool,
    fields,
    compressed: 0,
    dropped: 0,
    retrieved: 0,
    retrievedFields: {},
    firstSeen: at,
    lastSeen: at,
  };
}

function addRecord(target: Record<string, ShapeRecord>, key: string, delta: ShapeRecord): void {
  const prev = target[key] ?? blankRecord(delta.tool, delta.fields, delta.firstSeen);
  const r = { ...prev, retrievedFields: { ...prev.retrievedFields } };
  r.compressed += delta.compressed;
  r.dropped += delta.dropped;
  r.retrieved += delta.retrieved;
  for (const [f, n] of Object.entries(delta.retrievedFields))
    r.retrievedFields[f] = (r.retrievedFields[f] ?? 0) + n;
  if (delta.fields.length > r.fields.length) r.fields = delta.fields;
  if (delta.lastSeen > r.lastSeen) r.lastSeen = delta.lastSeen;
  target[key] = r;
}

/**
 * A filter that passes each observation once per process: the proxy sees the
 * same compressed content on every turn, so each (event, content) counts
 * once. The engine hands on the same observation object for a message it
 * observed before (a lookup); other copies are recognised by their hashes.
 */
export function newObservationFilter(): (o: ShapeObservation) => boolean {
  const seen = new WeakSet<ShapeObservation>();
  const counted = lruOfEntries<string, true>(50_000);
  return (o) => {
    if (seen.has(o)) return false;
    seen.add(o);
    const keys = o.hashes.map((h) => `${o.event}:${h}`);
    if (keys.length > 0 && keys.every((k) => counted.has(k))) return false;
    for (const k of keys) counted.set(k, true);
    return true;
  };
}

/** Adds pending counts to a state and applies the bounds (least recently seen shapes, oldest hashes go first). */
export function mergeToin(base: ToinData, pending: Pending, at: string): ToinData {
  const shapes = { ...base.shapes };
  for (const [key, delta] of Object.entries(pending.shapes)) addRecord(shapes, key, delta);
  const keys = Object.keys(shapes);
  if (keys.length > MAX_SHAPES) {
    keys.sort((a, b) => shapes[a]!.lastSeen.localeCompare(shapes[b]!.lastSeen));
    for (const k of keys.slice(0, keys.length - MAX_SHAPES)) delete shapes[k];
  }
  const hashEntries = [
    ...Object.entries(base.hashes).filter(([h]) => !(h in pending.hashes)),
    ...Object.entries(pending.hashes),
  ];
  const hashes = Object.fromEntries(hashEntries.slice(-MAX_HASHES));
  return { schema_version: 1, updated_at: at, shapes, hashes };
}

/**
 * Opens the TOIN store at `path` (tolerant of a missing or malformed file).
 *
 * @example const toin = await openToinStore({ path: config.toinPath }); toin.advice();
 */
export async function openToinStore(options: ToinStoreOptions): Promise<ToinStore> {
  const now = options.now ?? Date.now;
  const logger = options.logger ?? silentLogger;
  const iso = () => new Date(now()).toISOString();
  let state = await readToinFile(options.path, new Date(now()), logger);
  let pending: Pending = { shapes: {}, hashes: {} };
  let advice: ToinAdvice | undefined;
  let flushing: Promise<void> = Promise.resolve();
  const isNew = newObservationFilter();

  const bump = (key: string, tool: string, fields: string[], change: Partial<ShapeRecord>, at = iso()) => {
    const delta = { ...blankRecord(tool, fields, at), ...change };
    addRecord(state.shapes, key, delta);
    addRecord(pending.shapes, key, delta);
    advice = undefined;
  };

  const writeOut = async () => {
    if (Object.keys(pending.shapes).length === 0 && Object.keys(pending.hashes).length === 0) return;
    const taken = pending;
    pending = { shapes: {}, hashes: {} };
    await mkdir(dirname(options.path), { recursive: true });
    const release = await lockfile.lock(options.path, {
      realpath: false,
      retries: { retries: 20, minTimeout: 20, maxTimeout: 200 },
      stale: 10_000,
    });
    try {
      const onDisk = await readToinFile(options.path, new Date(now()), logger);
      const merged = mergeToin(onDisk, taken, iso());
      await new TextFile(options.path).write(JSON.stringify(merged, null, 1));
      // counts made while this flush waited stay in `pending` and in the view
      state = mergeToin(merged, pending, merged.updated_at);
      advice = undefined;
    } catch (err) {
      for (const [key, delta] of Object.entries(taken.shapes)) addRecord(pending.shapes, key, delta);
      Object.assign(pending.hashes, taken.hashes);
      throw err;
    } finally {
      await release();
    }
  };

  return {
    path: options.path,
    observe(observations) {
      // one time for the request's observations (a request's path makes them all; issue 19)
      let at: string | undefined;
      for (const o of observations) {
        if (!isNew(o)) continue;
        at ??= iso();
        bump(o.shape, o.tool, o.fields, o.event === 'compressed' ? { compressed: 1 } : { dropped: 1 }, at);
        for (const hash of o.hashes) {
          const shapes = new Set([...(state.hashes[hash] ?? []), o.shape]);
          state.hashes[hash] = [...shapes];
          pending.hashes[hash] = [...shapes];
        }
      }
    },
    retrieved(hash, fields) {
      const shapes = state.hashes[hash] ?? [];
      for (const key of shapes) {
        const record = state.shapes[key];
        if (!record) continue;
        const asked = fields.filter(
          (f) => record.fields.includes(f) || record.fields.includes(f.split('.').pop() ?? f),
        );
        bump(key, record.tool, record.fields, {
          retrieved: 1,
          retrievedFields: Object.fromEntries(asked.map((f) => [f, 1])),
        });
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
    flush() {
      flushing = flushing.catch(() => undefined).then(writeOut);
      return flushing;
    },
  };
}
