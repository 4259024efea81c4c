import { tokenMemoChars } from '../engine/tokens.js';
import type { ServerContext } from './context.js';

/**
 * What the server process holds, by part, for `/metrics`
 * (`service_memory_bytes{part}`): the process figures from
 * `process.memoryUsage()` (rss, heap_used, heap_total, external), then each
 * bounded store's estimate (characters count as bytes: V8 keeps Latin-1 text
 * one byte a character):
 * - engine_memo: memoized per-content engine results (`--memo-max-bytes` 1/2),
 * - body_parses: request texts and bytes kept to reuse their parse (3/8),
 * - token_counts: texts whose token count is memoized (1/8),
 * - ccr: the in-memory CCR store (`--ccr-memory-max-bytes`; absent with --store),
 * - response_cache: the response cache (`--cache-max-bytes`; absent with --no-cache or --store).
 */
export function memoryParts(ctx: ServerContext): Record<string, number> {
  const m = process.memoryUsage();
  const parts: Record<string, number> = {
    rss: m.rss,
    heap_used: m.heapUsed,
    heap_total: m.heapTotal,
    external: m.external,
  };
  const memo = ctx.engineMemo as { calculatedSize?: unknown };
  if (typeof memo.calculatedSize === 'number') parts.engine_memo = memo.calculatedSize;
  parts.body_parses = ctx.bodies.memoryBytes();
  parts.token_counts = tokenMemoChars();
  const ccr = ctx.ccr.memoryBytes?.();
  if (ccr !== undefined) parts.ccr = ccr;
  const cache = ctx.guards?.cache;
  if (cache && 'peekStats' in cache && !ctx.store) parts.response_cache = cache.peekStats().bytes;
  return parts;
}
