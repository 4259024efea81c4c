import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Config } from '../../config/options.js';
import type { ToinAdvice } from '../../engine/context/types.js';
import { SvcError, type SvcErrorCode } from '../../errors.js';
import type { Logger } from '../../log.js';
import { PACKAGE_ROOT } from '../../version.js';
import { keeps } from './facts.js';
import type {
  ApiCompressed,
  ApiJob,
  ApiReadRequest,
  Compressed,
  LargeBodies,
  LargeBodyJob,
  ReadRequest,
  WorkerEntry,
  WorkerLog,
  WorkerReply,
  WorkerRequest,
} from './types.js';

/**
 * The main thread's side of the large-body worker: one worker thread,
 * started on the first large body (never at start-up), that parses, counts
 * and compresses bodies of `--large-body-bytes` or more so the event loop
 * keeps answering. Its memory is returned by ending it: as soon as it is
 * idle after a body of `TERMINATE_AFTER_BYTES` or more or when its heap has
 * grown past `TERMINATE_AFTER_HEAP`, else after `IDLE_MS` without work.
 * A job that fails or runs past its time rejects (the caller forwards the
 * original bytes and counts the failure, principle 1); a timeout ends the
 * worker, and the next large body starts a new one.
 */

/** An idle worker ends after this long (its memo serves the next turns of a conversation until then). */
export const IDLE_MS = 60_000;
/** A worker that handled a body this large ends as soon as it is idle: its heap goes back to the system. */
export const TERMINATE_AFTER_BYTES = 16 * 1024 * 1024;
/** A worker whose heap is this large after a job ends as soon as it is idle. */
export const TERMINATE_AFTER_HEAP = 256 * 1024 * 1024;
/** Longest a `read` (parse, token count, cache key) may take. */
export const READ_TIMEOUT_MS = 30_000;
/** Time a `compress` may take beyond `--engine-timeout` (splicing, the retrieval tool, the copy back). */
export const COMPRESS_GRACE_MS = 10_000;

interface Pending {
  resolve(reply: WorkerReply): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout | undefined;
}

/**
 * The worker script: the built `worker.js` of this folder, in
 * dist/src/server/large-body (found from the package root: built, this
 * module also runs bundled from dist/src/cli-bundle, scripts/bundle-cli.js).
 * Run from the sources (tests of src/ under vitest) there is none: large
 * bodies are then handled in process, as with `--large-body-bytes 0`.
 */
export function workerScript(): URL | undefined {
  if (fileURLToPath(import.meta.url).endsWith('.ts')) return undefined;
  const file = join(PACKAGE_ROOT, 'dist', 'src', 'server', 'large-body', 'worker.js');
  return existsSync(file) ? pathToFileURL(file) : undefined;
}

export class LargeBodyPool implements LargeBodies {
  readonly threshold: number;
  readonly stats = { reads: 0, compressions: 0, failures: 0, started: 0 };
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  /** Jobs whose body the worker holds (read, not yet compressed or released). */
  private readonly held = new Map<number, number>();
  private seq = 0;
  private idle: NodeJS.Timeout | undefined;
  /** The largest body the current worker has handled. */
  private largest = 0;
  /** CCR entries received for each compression under way (`WorkerEntry`). */
  private readonly entries = new Map<number, Array<[string, string]>>();
  /** The worker's heap size after its last job (bytes). */
  private heap = 0;

  constructor(
    private readonly config: Config,
    private readonly logger: Logger,
    private readonly script: URL,
    /** Longest a read may take (tests shorten it). */
    private readonly readTimeoutMs = READ_TIMEOUT_MS,
  ) {
    this.threshold = config.largeBodyBytes;
  }

  takes(bytes: Buffer | undefined): bytes is Buffer {
    return bytes !== undefined && this.threshold > 0 && bytes.length >= this.threshold;
  }

  async read(request: Omit<ReadRequest, 'type' | 'id'>): Promise<LargeBodyJob> {
    const id = ++this.seq;
    const size = request.bytes.byteLength;
    this.stats.reads += 1;
    try {
      const reply = await this.call({ type: 'read', id, ...request }, this.readTimeoutMs, size);
      if (!('facts' in reply)) throw new Error('the worker answered a read with no facts');
      // the worker keeps only a body it will be asked to compress (`keeps`)
      if (keeps(reply.facts)) this.held.set(id, size);
      return { id, facts: reply.facts };
    } finally {
      this.settle();
    }
  }

  async compress(job: LargeBodyJob, toin: ToinAdvice | undefined): Promise<Compressed> {
    if (!this.held.has(job.id)) throw new Error('the worker no longer holds this body');
    this.stats.compressions += 1;
    const timeout = this.config.engineTimeout > 0 ? this.config.engineTimeout + COMPRESS_GRACE_MS : 0;
    const size = this.held.get(job.id) ?? 0;
    const entries: Array<[string, string]> = [];
    this.entries.set(job.id, entries);
    try {
      const reply = await this.call({ type: 'compress', id: job.id, toin }, timeout, size);
      if (!('compressed' in reply)) throw new Error('the worker answered a compress with no result');
      return { ...reply.compressed, entries };
    } finally {
      this.entries.delete(job.id);
      this.held.delete(job.id);
      this.settle();
    }
  }

  async apiRead(request: Omit<ApiReadRequest, 'type' | 'id'>): Promise<ApiJob> {
    const id = ++this.seq;
    const size = request.bytes.byteLength;
    this.stats.reads += 1;
    try {
      const reply = await this.call({ type: 'api-read', id, ...request }, this.readTimeoutMs, size);
      if (!('api' in reply)) throw new Error('the worker answered a read with no facts');
      this.held.set(id, size);
      return { id, facts: reply.api };
    } finally {
      this.settle();
    }
  }

  async apiCompress(job: ApiJob, bypass: boolean, toin: ToinAdvice | undefined): Promise<ApiCompressed> {
    if (!this.held.has(job.id)) throw new Error('the worker no longer holds this body');
    this.stats.compressions += 1;
    const timeout = this.config.engineTimeout > 0 ? this.config.engineTimeout + COMPRESS_GRACE_MS : 0;
    const entries: Array<[string, string]> = [];
    this.entries.set(job.id, entries);
    try {
      const reply = await this.call(
        { type: 'api-compress', id: job.id, bypass, toin },
        timeout,
        this.held.get(job.id) ?? 0,
      );
      if (!('apiCompressed' in reply)) throw new Error('the worker answered a compress with no result');
      return { ...reply.apiCompressed, entries };
    } finally {
      this.entries.delete(job.id);
      this.held.delete(job.id);
      this.settle();
    }
  }

  release(job: LargeBodyJob | ApiJob): void {
    if (!this.held.delete(job.id)) return;
    this.worker?.postMessage({ type: 'release', id: job.id } satisfies WorkerRequest);
    this.settle();
  }

  async close(): Promise<void> {
    clearTimeout(this.idle);
    const worker = this.worker;
    this.worker = undefined;
    this.failAll(new Error('server closing'));
    await worker?.terminate();
  }

  private start(): Worker {
    const worker = new Worker(this.script, { workerData: { config: this.config } });
    worker.unref();
    this.stats.started += 1;
    this.largest = 0;
    this.heap = 0;
    worker.on('message', (reply: WorkerReply | WorkerEntry) => {
      if ('entry' in reply) {
        this.entries.get(reply.id)?.push(reply.entry);
        return;
      }
      const p = this.pending.get(reply.id);
      this.replay(reply.logs);
      this.heap = reply.heap;
      if (!p) return;
      this.pending.delete(reply.id);
      clearTimeout(p.timer);
      p.resolve(reply);
    });
    const gone = (why: string) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      this.failAll(new Error(why));
    };
    worker.on('error', (err) => gone(`the large-body worker failed: ${err.message}`));
    worker.on('exit', (code) => gone(`the large-body worker exited (code ${code})`));
    return worker;
  }

  private call(request: WorkerRequest, timeoutMs: number, size: number): Promise<WorkerReply> {
    clearTimeout(this.idle);
    this.worker ??= this.start();
    const worker = this.worker;
    this.largest = Math.max(this.largest, size);
    return new Promise<WorkerReply>((resolve, reject) => {
      const timer =
        timeoutMs > 0
          ? setTimeout(() => {
              this.logger.warn('the large-body worker ran past its time; ending it', { ms: timeoutMs });
              if (this.worker === worker) this.worker = undefined;
              this.failAll(new Error(`the large-body worker took longer than ${timeoutMs} ms`));
              void worker.terminate();
            }, timeoutMs)
          : undefined;
      this.pending.set(request.id, {
        resolve: (reply) => {
          if (reply.ok) resolve(reply);
          else if (reply.svc) {
            // the request's own error (not a valid body, the engine's timeout): the caller answers it
            const { code, message, status, details } = reply.svc;
            reject(new SvcError(code as SvcErrorCode, message, { status, details }));
          } else {
            this.stats.failures += 1;
            reject(new Error(reply.error));
          }
        },
        reject: (err) => {
          this.stats.failures += 1;
          reject(err);
        },
        timer,
      });
      worker.postMessage(request);
    });
  }

  private failAll(err: Error): void {
    const pending = [...this.pending.values()];
    this.pending.clear();
    this.held.clear();
    for (const p of pending) {
      clearTimeout(p.timer);
      p.reject(err);
    }
  }

  /** With no work left: end the worker now after a very large body, else after `IDLE_MS`. */
  private settle(): void {
    const worker = this.worker;
    if (!worker || this.pending.size > 0 || this.held.size > 0) return;
    clearTimeout(this.idle);
    const end = () => {
      if (this.worker !== worker || this.pending.size > 0 || this.held.size > 0) return;
      this.worker = undefined;
      void worker.terminate();
    };
    if (this.largest >= TERMINATE_AFTER_BYTES || this.heap >= TERMINATE_AFTER_HEAP) end();
    else {
      this.idle = setTimeout(end, IDLE_MS);
      this.idle.unref();
    }
  }

  private replay(logs: readonly WorkerLog[]): void {
    for (const l of logs) this.logger[l.level](l.message, l.fields);
  }
}
