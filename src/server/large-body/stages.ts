import { putAll } from '../../ccr/store.js';
import type { ProviderFormat } from '../../formats/index.js';
import type { ProxyExchange, RetrievalState } from '../context.js';
import { guardNeeds } from '../guards/stages.js';
import { collectSoon } from './gc.js';
import { TERMINATE_AFTER_BYTES } from './pool.js';
import type { LargeBodies } from './types.js';

/**
 * The proxy's side of a large body (`--large-body-bytes`): the parse stage
 * hands it to the worker (`readInWorker`), the guards use the facts it sent
 * back, the compress stage has the worker compress, splice and offer the
 * retrieval tool (`compressInWorker`). Nothing parses the body on the main
 * thread, and nothing keeps it once the request has ended.
 */

function failed(ex: ProxyExchange, what: string, err: unknown): void {
  ex.event.compressionFailed = true;
  ex.ctx.logger.error(`${what}; forwarding the original request`, {
    path: ex.path,
    error: err instanceof Error ? err.message : String(err),
  });
}

/**
 * Reads a large body in the worker: `ex.large` holds what it found. False
 * when the worker failed: the failure is counted, compression is off, and
 * the caller parses the body here so the guards still see it (principle 1:
 * the original bytes go).
 */
export async function readInWorker(ex: ProxyExchange, pool: LargeBodies, decoded: Buffer): Promise<boolean> {
  const format = ex.format;
  if (!format) return false;
  try {
    const job = await pool.read({
      format: format.name,
      bytes: decoded,
      path: ex.path,
      search: ex.search,
      skipCompression: ex.skipCompression,
      needs: guardNeeds(ex),
      keyHash: ex.event.keyHash,
      headers: ex.req.headers,
    });
    ex.large = job;
    ex.onFinish.push(() => {
      pool.release(job);
      if (decoded.length >= TERMINATE_AFTER_BYTES) collectSoon();
    });
    ex.ctx.logger.debug('request body read in the large-body worker', {
      path: ex.path,
      bytes: decoded.length,
    });
    const { facts } = job;
    ex.event.model = facts.model;
    ex.event.stream = facts.stream;
    // as `readJson` does: a body that is not JSON or not the format is passed through
    if (facts.mode === 'passthrough') ex.event.mode = 'passthrough';
    ex.skipCompression = facts.skipCompression;
    return true;
  } catch (err) {
    failed(ex, 'the large-body worker could not read the request', err);
    ex.skipCompression = true;
    return false;
  }
}

/** The retrieval loop's state for a body the worker wrote: its text, decoded only if the loop needs it. */
function retrievalOf(body: Buffer, format: ProviderFormat): RetrievalState {
  let text: string | undefined;
  return {
    format,
    get text() {
      text ??= body.toString('utf8');
      return text;
    },
  };
}

/**
 * Has the worker compress a body it read (engine, splice, retrieval tool),
 * stores the originals of its markers in the CCR store, then forwards what
 * it wrote. On any failure the original bytes go and the failure is counted.
 */
export async function compressInWorker(ex: ProxyExchange): Promise<void> {
  const pool = ex.ctx.largeBodies;
  const job = ex.large;
  const format = ex.format;
  if (!pool || !job || !format || ex.skipCompression || job.facts.messages === 0) return;
  const { ctx } = ex;
  try {
    const out = await pool.compress(job, ctx.toin?.advice());
    job.shape = out.shape;
    // originals first, then the markers that point at them (principle 3)
    if (out.entries.length > 0) await putAll(ctx.ccr, new Map(out.entries));
    if (out.observations.length > 0)
      ctx.bus.emit('toin.observed', { time: new Date(ctx.now()), observations: out.observations });
    Object.assign(ex.event, out.event);
    // a new body, or the decoded original with the retrieval tool already in it
    const body = out.body ? Buffer.from(out.body) : out.retrieval ? ex.body?.decoded : undefined;
    if (body) {
      ex.outBody = body;
      ex.outEncoding = undefined;
      if (out.retrieval) ex.retrieval = retrievalOf(body, format);
    }
  } catch (err) {
    failed(ex, 'large-body compression failed', err);
  }
}
