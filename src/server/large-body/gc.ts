import { exposeGc } from '../idle-gc.js';

/**
 * One full garbage collection shortly after a very large body's request has
 * ended. The body and the socket chunks it arrived in (twice its size) are
 * garbage then, but an idle server may not collect for a long while: this
 * returns that memory now. The collector is V8's own `gc`, exposed on first
 * use; nothing happens when it cannot be.
 */
let collect: (() => void) | undefined;
let exposed = false;

function collector(): (() => void) | undefined {
  if (!exposed) {
    exposed = true;
    collect = exposeGc();
  }
  return collect;
}

let timer: NodeJS.Timeout | undefined;

/** Collects once `delayMs` after the last call (several large bodies in a row: once, after the last). */
export function collectSoon(delayMs = 2000): void {
  clearTimeout(timer);
  timer = setTimeout(() => collector()?.(), delayMs);
  timer.unref();
}
