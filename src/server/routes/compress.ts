import type { IncomingMessage, ServerResponse } from 'node:http';
import { putAll } from '../../ccr/store.js';
import { compressAndStore } from '../../compression.js';
import type { CompressionResult } from '../../engine/types.js';
import { isSvcError, SvcError } from '../../errors.js';
import { DEFAULT_FORMAT } from '../../formats/index.js';
import { credentialOf } from '../../guards/credentials.js';
import { attributeEvent } from '../attribution.js';
import { isAcceptedKey, keyHash, requestKey } from '../auth.js';
import type { RoutePlugin } from '../context.js';
import { compressionOf, type ServerContext } from '../context.js';
import { asSvcError, elapsedMs, emitFinished, type PendingEvent, startEvent } from '../finished-event.js';
import { guardCompress } from '../guards/stages.js';
import { collectSoon } from '../large-body/gc.js';
import { TERMINATE_AFTER_BYTES } from '../large-body/pool.js';
import type { ApiCompressed, ApiJob, LargeBodies } from '../large-body/types.js';
import { readBody } from '../read-body.js';
import { sendJson, sendSvcError } from '../respond.js';
import { parseCompressRequest } from './compress-request.js';

/** Codes counted as compression failures in stats and metrics. */
const COMPRESSION_FAILURES = new Set([
  'SVC_COMPRESSION_FAILED',
  'SVC_ENGINE_TIMEOUT',
  'SVC_STORE_UNAVAILABLE',
]);

/** True when the request asks to skip compression (`x-service-bypass: true`, spec 4 rule 2). */
export function isBypass(req: IncomingMessage): boolean {
  return (
    String(req.headers['x-service-bypass'] ?? '')
      .trim()
      .toLowerCase() === 'true'
  );
}

/** Parses JSON, or throws SVC_BAD_REQUEST naming the body. */
export function parseJsonBody(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch (cause) {
    throw new SvcError('SVC_BAD_REQUEST', 'body is not valid JSON', { cause, details: { field: 'body' } });
  }
}

/** The result of a bypassed request: the messages as sent, `tokens` before and after. */
export function bypassResult(messages: CompressionResult['messages'], tokens: number): CompressionResult {
  return {
    messages,
    tokens_before: tokens,
    tokens_after: tokens,
    tokens_saved: 0,
    compression_ratio: 1,
    transforms_applied: [],
    ccr_hashes: [],
  };
}

/** The response body of `POST /v1/compress` (spec 4), fields in this order. */
export function compressResponse(result: CompressionResult): Record<string, unknown> {
  return {
    messages: result.messages,
    tokens_before: result.tokens_before,
    tokens_after: result.tokens_after,
    tokens_saved: result.tokens_saved,
    compression_ratio: result.compression_ratio,
    transforms_applied: result.transforms_applied,
    ccr_hashes: result.ccr_hashes,
  };
}

/**
 * `POST /v1/compress` of a large body: the worker parses and checks it, counts
 * its tokens for the rate limit, compresses it and writes the response body;
 * the originals are stored here before it is sent. A failing worker answers
 * SVC_COMPRESSION_FAILED (counted as a compression failure).
 */
async function compressInWorker(
  ctx: ServerContext,
  pool: LargeBodies,
  req: IncomingMessage,
  res: ServerResponse,
  pending: PendingEvent,
  bytes: Buffer,
): Promise<void> {
  const ev = pending.event;
  const bypass = isBypass(req);
  const worker = (err: unknown) =>
    isSvcError(err)
      ? err
      : new SvcError('SVC_COMPRESSION_FAILED', `compression failed: ${(err as Error)?.message ?? err}`, {
          cause: err,
        });
  let job: ApiJob;
  try {
    job = await pool.apiRead({
      bytes,
      countTokens: bypass || ctx.guards?.rateLimiter !== undefined,
      keyHash: ev.keyHash,
    });
  } catch (err) {
    throw worker(err);
  }
  ctx.logger.debug('/v1/compress body read in the large-body worker', { bytes: bytes.length });
  try {
    ev.model = job.facts.model;
    if (!(await guardCompress(ctx, req, res, ev, [], job.facts.model, job.facts.tokens))) return;
    if (bypass) ev.mode = 'bypass';
    let out: ApiCompressed;
    try {
      out = await pool.apiCompress(job, bypass, ctx.toin?.advice());
    } catch (err) {
      throw worker(err);
    }
    if (out.entries.length > 0) {
      try {
        await putAll(ctx.ccr, new Map(out.entries));
      } catch (err) {
        throw new SvcError('SVC_STORE_UNAVAILABLE', 'could not store originals in the CCR store', {
          cause: err,
          details: { tokensBefore: out.event.tokensBefore },
        });
      }
    }
    if (out.observations.length > 0)
      ctx.bus.emit('toin.observed', { time: new Date(ctx.now()), observations: out.observations });
    Object.assign(ev, out.event);
    ev.overheadMs = elapsedMs(pending);
    ev.status = 200;
    const body = Buffer.from(out.body);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length) });
    res.end(body);
  } finally {
    pool.release(job);
    if (bytes.length >= TERMINATE_AFTER_BYTES) collectSoon();
  }
}

async function handleCompress(ctx: ServerContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const pending = startEvent(ctx, '/v1/compress', 'compress');
  const ev = pending.event;
  ev.mode = 'compress';
  try {
    const key = requestKey(req.headers);
    ev.keyHash = keyHash(credentialOf(req.headers, (req as { search?: string | null }).search));
    attributeEvent(ev, req);
    if (!isAcceptedKey(key, ctx.config.apiKeys)) {
      throw new SvcError(
        'SVC_UNAUTHORIZED',
        'missing or invalid API key: send one of the configured keys as `Authorization: Bearer KEY` or `x-api-key: KEY`',
      );
    }
    const body = await readBody(req, ctx.config.maxBodyBytes, ctx.largeBodies?.threshold);
    if (!body.decoded) {
      throw new SvcError('SVC_BAD_REQUEST', `content-encoding ${body.encoding} is not supported`, {
        status: 415,
      });
    }
    // a large body: read, counted and compressed in the large-body worker
    const pool = ctx.largeBodies;
    if (pool?.takes(body.decoded)) return await compressInWorker(ctx, pool, req, res, pending, body.decoded);
    const { messages, model } = parseCompressRequest(parseJsonBody(body.decoded));
    ev.model = model;
    if (!(await guardCompress(ctx, req, res, ev, messages, model))) return;
    let result: CompressionResult;
    if (isBypass(req)) {
      ev.mode = 'bypass';
      const { tokenizerFor } = await import('../../engine/tokens.js');
      result = bypassResult(messages, tokenizerFor(model).countMessages(messages));
    } else {
      result = (await compressAndStore(compressionOf(ctx), messages, model, undefined, ev.keyHash)).result;
    }
    ev.tokensBefore = result.tokens_before;
    ev.tokensAfter = result.tokens_after;
    ev.tokensSaved = result.tokens_saved;
    ev.transforms = result.transforms_applied;
    ev.overheadMs = elapsedMs(pending);
    ev.status = 200;
    sendJson(res, 200, compressResponse(result));
  } catch (err) {
    const error = asSvcError(err);
    if (error.status >= 500)
      ctx.logger.error('/v1/compress failed', { code: error.code, error: error.message });
    else ctx.logger.debug('/v1/compress rejected', { code: error.code, status: error.status });
    ev.status = error.status;
    ev.errorCode = error.code;
    ev.compressionFailed = COMPRESSION_FAILURES.has(error.code);
    sendSvcError(res, DEFAULT_FORMAT, error);
    if (!req.complete) req.resume();
  } finally {
    emitFinished(ctx, pending);
  }
}

/** `POST /v1/compress`: compression as a service, no model called (spec 4, 5, 7). */
export const compressRoutes: RoutePlugin = (app, ctx) => {
  app.post('/v1/compress', (req, res) => {
    void handleCompress(ctx, req, res);
  });
};
