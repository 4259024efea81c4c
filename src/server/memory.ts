import { engineMemoBytes } from '../engine/memo-budget.js';
import { tokenMemoChars } from '../engine/tokens.js';
import type { ServerContext } from './context.js';

/**
 * What the server process holds, by part, for `/metrics`
 * (`service_memory_bytes{part}`): the process figures from
 * `process.memoryUsage()` (rss, heap_used, heap_total, external), then each
 * bounded store's estimate of the bytes it keeps alive (src/engine/memo-budget.ts:
 * a text counts one byte a character when all of them are Latin-1, else two;
 * entries count their bookkeeping). The memos share `--memo-max-bytes`:
 * - engine_memo: memoized per-content engine results (2/16),
 * - body_parses: request texts, bytes and parsed messages kept to reuse their parse, with what
 *   the proxy keeps with them (the body forwarded, the messages as the engine reads them) (7/16),
 * - token_counts: texts whose token count is memoized (1/16; two bytes a character, an upper bound),
 * - content_hashes: texts whose content hash is memoized (1/16),
 * - history_scans: what the engine scanned of conversations, kept for their next turn (4/16),
 * - spelled_lengths: long strings whose JSON length the splicer memoized (1/16),
 * - ccr: the in-memory CCR store (`--ccr-memory-max-bytes`, in bytes as above, with the originals
 *   on their way to the durable store past it; absent with --store),
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
  parts.token_counts = 2 * tokenMemoChars();
  Object.assign(parts, engineMemoBytes());
  const ccr = ctx.ccr.memoryBytes?.();
  if (ccr !== undefined) parts.ccr = ccr;
  const cache = ctx.guards?.cache;
  if (cache && 'peekStats' in cache && !ctx.store) parts.response_cache = cache.peekStats().bytes;
  return parts;
}
