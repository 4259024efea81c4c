import type { IncomingMessage, ServerResponse } from 'node:http';
import { FORMATS, formatForPassthrough, type ProviderFormat } from '../../formats/index.js';
import { credentialOf } from '../../guards/credentials.js';
import { requestPaths } from '../../quiet.js';
import { attributeEvent } from '../attribution.js';
import { keyHash, requestKey } from '../auth.js';
import type { RoutePlugin, ServerContext } from '../context.js';
import { postExact } from '../exact-posts.js';
import { asSvcError, emitFinished, startEvent } from '../finished-event.js';
import { CACHE_HEADER } from '../guards/responses.js';
import { sendSvcError } from '../respond.js';
import type { ProxyExchange } from './pipeline.js';
import { RequestCancel, upstreamCaller } from './upstream.js';

type RoutedRequest = IncomingMessage & { path?: string; search?: string | null };

/**
 * Which upstream a request goes to, and the format its errors are shaped in:
 * a parsed format's own (`format.upstreamUrl`); for other `/v1` paths the
 * format that claims the request (`formatForPassthrough`).
 */
export function upstreamFor(
  ctx: ServerContext,
  format: ProviderFormat | undefined,
  req: IncomingMessage,
  path: string,
): {
  base: string;
  errorFormat: ProviderFormat;
} {
  const errorFormat = format ?? formatForPassthrough(path, req.headers);
  return { base: errorFormat.upstreamUrl(ctx.config), errorFormat };
}

/**
 * Handles one proxied request: builds the exchange, runs the pipeline,
 * turns failures into provider-shaped errors and emits one
 * `request.finished` event when the response has ended.
 */
export function handleProxy(
  ctx: ServerContext,
  req: RoutedRequest,
  res: ServerResponse,
  format: ProviderFormat | undefined,
  countsTokens = false,
): Promise<void> {
  const ended = requestPaths.enter();
  const running = runProxy(ctx, req, res, format, ended, countsTokens);
  ctx.inFlight.add(running);
  return running.finally(() => {
    ended();
    ctx.inFlight.delete(running);
  });
}

async function runProxy(
  ctx: ServerContext,
  req: RoutedRequest,
  res: ServerResponse,
  format: ProviderFormat | undefined,
  ended: () => void,
  countsTokens = false,
): Promise<void> {
  const path = req.path ?? new URL(req.url ?? '/', 'http://x').pathname;
  const search = req.search ?? '';
  const pending = startEvent(ctx, path, format?.name ?? 'other');
  const cancel = new RequestCancel();
  res.on('close', () => {
    if (!res.writableFinished) cancel.abort();
  });
  const { base, errorFormat } = upstreamFor(ctx, format, req, path);
  const url = base + path.slice('/v1'.length) + search;
  const clientKey = requestKey(req.headers);
  pending.event.keyHash = keyHash(credentialOf(req.headers, search));
  attributeEvent(pending.event, req);
  const ex: ProxyExchange = {
    ctx,
    req,
    res,
    path,
    search,
    format,
    countsTokens,
    upstreamBase: base,
    clientKey,
    body: undefined,
    text: undefined,
    hints: undefined,
    json: undefined,
    parsed: undefined,
    output: undefined,
    // --observe forwards every request untouched, as --no-optimize does (src/server/accounting.ts projects).
    skipCompression: !ctx.config.optimize || ctx.config.observe,
    outBody: Buffer.alloc(0),
    outEncoding: undefined,
    signal: cancel,
    callUpstream: upstreamCaller(ctx.upstream, req, url, cancel),
    upstream: undefined,
    responseTaps: [],
    afterForward: [],
    onFinish: [],
    pending,
    event: pending.event,
    spliced: undefined,
    cachePlan: undefined,
    retrieval: undefined,
  };
  try {
    await ctx.pipeline.run(ex);
  } catch (err) {
    if (cancel.aborted) {
      pending.event.status = 499;
      pending.event.errorCode = 'SVC_CLIENT_CLOSED';
      ctx.logger.debug('client closed the request; upstream call cancelled', { path });
    } else {
      const error = asSvcError(err);
      pending.event.status = res.headersSent ? pending.event.status : error.status;
      pending.event.errorCode = error.code;
      const log = error.status >= 500 ? ctx.logger.warn : ctx.logger.debug;
      log(`${path}: ${error.message}`, { code: error.code, status: error.status });
      if (ex.cacheOutcome !== undefined && !res.headersSent) res.setHeader(CACHE_HEADER, ex.cacheOutcome);
      sendSvcError(res, errorFormat, error);
      if (!req.complete) req.resume();
    }
  } finally {
    ex.upstream?.body.destroy();
    // its response has ended: work after it (the stats' counts) no longer waits for this one
    ended();
    for (const hook of ex.onFinish) {
      try {
        await hook(ex);
      } catch (err) {
        ctx.logger.error('an onFinish hook failed', { error: String(err) });
      }
    }
    emitFinished(ctx, pending);
  }
}

/**
 * Each format's path (`POST /v1/messages`, `/v1/chat/completions`...):
 * compressed, then forwarded (spec 1, 4); and its token-counting path, when
 * it has one: compressed the same way, then forwarded.
 */
export const proxyRoutes: RoutePlugin = (app, ctx) => {
  for (const format of Object.values(FORMATS)) {
    postExact(app, format.path, (req, res) => {
      void handleProxy(ctx, req, res, format);
    });
    const counting = format.tokenCountPath;
    if (counting)
      postExact(app, counting, (req, res) => {
        void handleProxy(ctx, req, res, format, true);
      });
  }
};
