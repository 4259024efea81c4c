import type { IncomingMessage, ServerResponse } from 'node:http';
import { compressAndStore } from '../../compression.js';
import type { CompressionResult } from '../../engine/types.js';
import { SvcError } from '../../errors.js';
import { DEFAULT_FORMAT } from '../../formats/index.js';
import { credentialOf } from '../../guards/credentials.js';
import { attributeEvent } from '../attribution.js';
import { isAcceptedKey, keyHash, requestKey } from '../auth.js';
import type { RoutePlugin } from '../context.js';
import { compressionOf, type ServerContext } from '../context.js';
import { asSvcError, elapsedMs, emitFinished, startEvent } from '../finished-event.js';
import { guardCompress } from '../guards/stages.js';
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
    const body = await readBody(req, ctx.config.maxBodyBytes);
    if (!body.decoded) {
      throw new SvcError('SVC_BAD_REQUEST', `content-encoding ${body.encoding} is not supported`, {
        status: 415,
      });
    }
    const { messages, model } = parseCompressRequest(parseJsonBody(body.decoded));
    ev.model = model;
    if (!(await guardCompress(ctx, req, res, ev, messages, model))) return;
    let result: CompressionResult;
    if (isBypass(req)) {
      ev.mode = 'bypass';
      const { tokenizerFor } = await import('../../engine/tokens.js');
      const tokens = tokenizerFor(model).countMessages(messages);
      result = {
        messages,
        tokens_before: tokens,
        tokens_after: tokens,
        tokens_saved: 0,
        compression_ratio: 1,
        transforms_applied: [],
        ccr_hashes: [],
      };
    } else {
      result = (await compressAndStore(compressionOf(ctx), messages, model, undefined, ev.keyHash)).result;
    }
    ev.tokensBefore = result.tokens_before;
    ev.tokensAfter = result.tokens_after;
    ev.tokensSaved = result.tokens_saved;
    ev.transforms = result.transforms_applied;
    ev.overheadMs = elapsedMs(pending);
    ev.status = 200;
    sendJson(res, 200, {
      messages: result.messages,
      tokens_before: result.tokens_before,
      tokens_after: result.tokens_after,
      tokens_saved: result.tokens_saved,
      compression_ratio: result.compression_ratio,
      transforms_applied: result.transforms_applied,
      ccr_hashes: result.ccr_hashes,
    });
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
