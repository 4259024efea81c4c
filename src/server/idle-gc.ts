import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { ServerContext } from './context.js';

/** How long the server must have finished no request before it collects garbage once. */
export const IDLE_GC_MS = 5_000;

/**
 * V8's full collection, made available the way test runners do it for leak
 * checks (`--expose-gc` set at run time, `gc` taken from a fresh context);
 * undefined when that is not possible.
 */
export function exposeGc(): (() => void) | undefined {
  const existing = (globalThis as { gc?: () => void }).gc;
  if (existing) return existing;
  try {
    setFlagsFromString('--expose-gc');
    return runInNewContext('gc') as () => void;
  } catch {
    return undefined;
  }
}

/**
 * One full garbage collection when the server goes idle after work (issue 19):
 * V8 collects its old generation only under allocation pressure, so after a
 * burst of large requests the garbage they left (hundreds of MB after 30 s of
 * ~91k-token bodies) stays in the heap, and in RSS, for as long as no request
 * comes. `IDLE_GC_MS` after the last finished request, with none in flight,
 * it runs one collection (a pause of tens of ms, when nothing waits).
 */
export function collectWhenIdle(
  ctx: ServerContext,
  gc: (() => void) | undefined = exposeGc(),
  idleMs = IDLE_GC_MS,
): void {
  if (!gc) return;
  let last = 0;
  let timer: NodeJS.Timeout | undefined;
  const check = () => {
    timer = undefined;
    const waited = Date.now() - last;
    if (waited < idleMs || ctx.inFlight.size > 0) {
      timer = setTimeout(check, Math.max(10, idleMs - waited)).unref();
      return;
    }
    gc();
  };
  ctx.bus.on('request.finished', () => {
    last = Date.now();
    timer ??= setTimeout(check, idleMs).unref();
  });
  ctx.onClose.push(() => {
    if (timer) clearTimeout(timer);
    timer = undefined;
  });
}
