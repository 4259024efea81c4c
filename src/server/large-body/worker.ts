import { getHeapStatistics } from 'node:v8';
import { parentPort, workerData } from 'node:worker_threads';
import type { Config } from '../../config/options.js';
import { isSvcError } from '../../errors.js';
import type { WorkerEntry, WorkerReply, WorkerRequest } from './types.js';
import { LargeBodyWork } from './work.js';

/**
 * The large-body worker thread (`LargeBodyPool` starts it): reads and
 * compresses the bodies the main thread sends, one message at a time.
 */
if (!parentPort) throw new Error('the large-body worker runs in a worker thread');
const port = parentPort;
const work = new LargeBodyWork((workerData as { config: Config }).config);

port.on('message', (request: WorkerRequest) => {
  void handle(request);
});

let queue: Promise<void> = Promise.resolve();

/** Runs requests one after the other (a compress awaits the engine, which may be async). */
function handle(request: WorkerRequest): Promise<void> {
  queue = queue.then(async () => {
    work.logs = [];
    let reply: WorkerReply;
    let transfer: ArrayBuffer[] = [];
    const sendEntries = (entries: Array<[string, string]>) => {
      for (const entry of entries) port.postMessage({ id: request.id, entry } satisfies WorkerEntry);
    };
    try {
      if (request.type === 'release') {
        work.release(request.id);
        return;
      }
      if (request.type === 'read')
        reply = { id: request.id, ok: true, facts: work.read(request), logs: work.logs, heap: 0 };
      else if (request.type === 'api-read')
        reply = { id: request.id, ok: true, api: await work.apiRead(request), logs: work.logs, heap: 0 };
      else if (request.type === 'api-compress') {
        const done = await work.apiCompress(request.id, request.bypass, request.toin);
        transfer = done.transfer;
        sendEntries(done.compressed.entries);
        done.compressed.entries = [];
        reply = { id: request.id, ok: true, apiCompressed: done.compressed, logs: work.logs, heap: 0 };
      } else {
        const done = await work.compress(request.id, request.toin);
        transfer = done.transfer;
        sendEntries(done.compressed.entries);
        done.compressed.entries = [];
        reply = { id: request.id, ok: true, compressed: done.compressed, logs: work.logs, heap: 0 };
      }
    } catch (err) {
      reply = {
        id: request.id,
        ok: false,
        error: err instanceof Error ? err.message : String(err),
        logs: work.logs,
        heap: 0,
      };
      // the request's own error (a bad body, the engine's timeout) goes back as itself
      if (isSvcError(err))
        reply.svc = { code: err.code, status: err.status, message: err.message, details: err.details };
    }
    reply.heap = getHeapStatistics().total_heap_size;
    port.postMessage(reply, transfer);
  });
  return queue;
}
