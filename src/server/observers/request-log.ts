import { createWriteStream, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { SvcError } from '../../errors.js';
import type { RequestFinishedEvent } from '../../events.js';
import type { RoutePlugin } from '../context.js';

/**
 * One JSON line per request for `--log-file`: what happened and what it cost,
 * never message content and never a key (only the key's hash prefix).
 */
export function requestLogLine(e: RequestFinishedEvent): string {
  return JSON.stringify({
    time: e.time.toISOString(),
    path: e.path,
    format: e.format,
    mode: e.mode,
    model: e.model ?? null,
    stream: e.stream,
    status: e.status,
    upstream_status: e.upstreamStatus ?? null,
    tokens_before: e.tokensBefore,
    tokens_after: e.tokensAfter,
    tokens_saved: e.tokensSaved,
    tokens_added: e.tokensAdded ?? 0,
    transforms: e.transforms,
    latency_ms: e.latencyMs,
    overhead_ms: e.overheadMs,
    usage: e.usage ?? null,
    cached: e.cached,
    rate_limited: e.rateLimited,
    compression_failed: e.compressionFailed,
    error_code: e.errorCode ?? null,
    key_hash: e.keyHash ?? null,
    project: e.project ?? null,
    client: e.client ?? null,
    request_id: e.requestId ?? null,
    round: 0,
    retrieval_rounds: e.retrievalRounds?.length ?? 0,
    retrieval_tokens: e.retrievalTokens ?? 0,
    cost_usd: e.costUsd ?? null,
    savings_usd: e.savingsUsd ?? null,
    cache_aware_savings_usd: e.cacheAwareSavingsUsd ?? null,
    ...(e.projected
      ? {
          projected: {
            tokens_after: e.projected.tokensAfter,
            tokens_saved: e.projected.tokensSaved,
            savings_usd: e.projected.savingsUsd ?? null,
          },
        }
      : {}),
  });
}

/**
 * One line per retrieval continuation of a request, linked to it by
 * `request_id` and numbered by `round` (1 for the first continuation); the
 * request's own line is round 0 and already counts them.
 */
export function retrievalRoundLines(e: RequestFinishedEvent): string[] {
  return (e.retrievalRounds ?? []).map((r) =>
    JSON.stringify({
      time: e.time.toISOString(),
      type: 'retrieval_round',
      request_id: e.requestId ?? null,
      round: r.round,
      path: e.path,
      model: e.model ?? null,
      tokens_sent: r.tokens,
      usage: r.usage ?? null,
      cost_usd: r.costUsd ?? null,
      key_hash: e.keyHash ?? null,
    }),
  );
}

/** `--log-file PATH` (JSONL, appended) and a `debug` line per request on stderr. */
export const requestLogRoutes: RoutePlugin = (_app, ctx) => {
  ctx.bus.on('request.finished', (e) => {
    if (ctx.logger.enabled?.('debug') === false) return;
    ctx.logger.debug(`${e.path} ${e.status} ${e.mode}`, {
      model: e.model,
      saved: e.tokensSaved,
      latency_ms: e.latencyMs,
      overhead_ms: e.overheadMs,
    });
  });
  const path = ctx.config.logFile;
  if (!path) return;
  try {
    mkdirSync(dirname(path), { recursive: true });
  } catch (cause) {
    throw new SvcError('SVC_BAD_CONFIG', `--log-file: cannot create the folder of ${path}`, { cause });
  }
  const out = createWriteStream(path, { flags: 'a' });
  out.on('error', (err) => ctx.logger.error('cannot write the request log', { path, error: err.message }));
  ctx.bus.on('request.finished', (e) => {
    let lines = `${requestLogLine(e)}\n`;
    for (const line of retrievalRoundLines(e)) lines += `${line}\n`;
    out.write(lines);
  });
  ctx.onClose.push(() => new Promise<void>((resolve) => out.end(resolve)));
};
