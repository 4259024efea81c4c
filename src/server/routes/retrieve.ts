import type { IncomingMessage, ServerResponse } from 'node:http';
import { isOwnedBy } from '../../ccr/owner.js';
import { retrieve } from '../../ccr/retrieve.js';
import { isContentHash } from '../../engine/hash.js';
import { isSvcError, SvcError } from '../../errors.js';
import { DEFAULT_FORMAT } from '../../formats/index.js';
import { credentialOf } from '../../guards/credentials.js';
import { toinView } from '../../toin/view.js';
import { isAcceptedKey, keyHash, requestKey } from '../auth.js';
import type { RoutePlugin, ServerContext } from '../context.js';
import { readBody } from '../read-body.js';
import { sendJson, sendSvcError } from '../respond.js';

function checkKey(ctx: ServerContext, req: IncomingMessage): void {
  if (!isAcceptedKey(requestKey(req.headers), ctx.config.apiKeys)) {
    throw new SvcError(
      'SVC_UNAUTHORIZED',
      'missing or invalid API key: send one of the configured keys as `Authorization: Bearer KEY` or `x-api-key: KEY`',
    );
  }
}

async function answer(
  ctx: ServerContext,
  req: IncomingMessage,
  res: ServerResponse,
  hash: string,
  query: string | undefined,
): Promise<void> {
  const time = new Date(ctx.now());
  try {
    // With API keys an entry is the creating client's: another key gets the 404 of an unknown hash.
    if (ctx.config.apiKeys.length > 0 && isContentHash(hash)) {
      const caller = keyHash(credentialOf(req.headers, (req as { search?: string | null }).search));
      if (!(await isOwnedBy(ctx.ccr, caller, hash)))
        throw new SvcError('SVC_NOT_FOUND', `no CCR entry for hash ${hash} stored with this key`, {
          details: { hash },
        });
    }
    const r = await retrieve(ctx.ccr, hash, query, ctx.config.ccrTtl);
    ctx.bus.emit('retrieved', { time, hash, query, found: true, via: 'endpoint' });
    sendJson(res, 200, {
      hash: r.hash,
      query: query ?? null,
      content: r.content,
      ...(r.match ? { match: r.match } : {}),
    });
  } catch (err) {
    if (isSvcError(err) && err.code === 'SVC_NOT_FOUND') {
      ctx.bus.emit('retrieved', { time, hash, query, found: false, via: 'endpoint' });
    }
    throw err;
  }
}

function parseRetrieveBody(buf: Buffer): { hash: string; query: string | undefined } {
  let body: unknown;
  try {
    body = JSON.parse(buf.toString('utf8'));
  } catch (cause) {
    throw new SvcError('SVC_BAD_REQUEST', 'body must be JSON: {"hash": "...", "query": "..."}', { cause });
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new SvcError('SVC_BAD_REQUEST', 'body must be a JSON object');
  const { hash, query } = body as Record<string, unknown>;
  if (typeof hash !== 'string') throw new SvcError('SVC_BAD_REQUEST', 'hash: required, a string');
  if (query !== undefined && query !== null && typeof query !== 'string')
    throw new SvcError('SVC_BAD_REQUEST', 'query: must be a string');
  return { hash, query: typeof query === 'string' ? query : undefined };
}

function guard(ctx: ServerContext, res: ServerResponse, run: () => Promise<void>): void {
  run().catch((err) => {
    const error = isSvcError(err) ? err : new SvcError('SVC_INTERNAL', 'retrieval failed', { cause: err });
    if (error.status >= 500) ctx.logger.error(error.message, { code: error.code });
    if (!res.headersSent) sendSvcError(res, DEFAULT_FORMAT, error);
  });
}

/**
 * CCR retrieval and TOIN:
 * `GET /v1/retrieve/:hash` (the original), `POST /v1/retrieve` `{hash, query?}`
 * (whole, or only matching items/lines), `GET /v1/toin` (what TOIN learned).
 * Guarded by the API keys of `/v1/compress` when configured.
 */
export const retrieveRoutes: RoutePlugin = (app, ctx) => {
  app.get('/v1/retrieve/:hash', (req, res) =>
    guard(ctx, res, async () => {
      checkKey(ctx, req);
      const query = new URL(req.url ?? '/', 'http://x').searchParams.get('query') ?? undefined;
      await answer(ctx, req, res, String(req.params.hash ?? ''), query);
    }),
  );
  app.post('/v1/retrieve', (req, res) =>
    guard(ctx, res, async () => {
      checkKey(ctx, req);
      const body = await readBody(req, ctx.config.maxBodyBytes);
      if (!body.decoded)
        throw new SvcError('SVC_BAD_REQUEST', `content-encoding ${body.encoding} is not supported`, {
          status: 415,
        });
      const { hash, query } = parseRetrieveBody(body.decoded);
      await answer(ctx, req, res, hash, query);
    }),
  );
  app.get('/v1/toin', (req, res) =>
    guard(ctx, res, async () => {
      checkKey(ctx, req);
      if (!ctx.toin) throw new SvcError('SVC_NOT_FOUND', 'TOIN is not available');
      sendJson(res, 200, toinView(ctx.toin.data(), ctx.toin.path));
    }),
  );
};
