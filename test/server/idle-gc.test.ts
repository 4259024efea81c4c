import { afterEach, describe, expect, it, vi } from 'vitest';
import { createEventBus } from '../../src/events.js';
import { silentLogger } from '../../src/log.js';
import type { ServerContext } from '../../src/server/context.js';
import { collectWhenIdle, exposeGc, idleCollection } from '../../src/server/idle-gc.js';

afterEach(() => {
  vi.useRealTimers();
});

/** Advances the fake clock and its timers. */
const sleep = async (ms: number) => {
  await vi.advanceTimersByTimeAsync(ms);
};

function fakeCtx() {
  return {
    bus: createEventBus(),
    inFlight: new Set<Promise<void>>(),
    onClose: [] as Array<() => unknown>,
    logger: silentLogger,
  };
}

const finished = (ctx: ReturnType<typeof fakeCtx>) =>
  ctx.bus.emit('request.finished', {} as Parameters<typeof ctx.bus.emit<'request.finished'>>[1]);

describe('a full GC when the server goes idle (issue 19)', () => {
  it('exposes V8’s collector', () => {
    const gc = exposeGc();
    expect(typeof gc).toBe('function');
    gc!();
  });

  it('collects once, idleMs after the last finished request, never with a request in flight', async () => {
    vi.useFakeTimers();
    const ctx = fakeCtx();
    let runs = 0;
    const steps: string[] = [];
    collectWhenIdle(
      ctx as unknown as ServerContext,
      () => {
        runs++;
        steps.push('collect');
      },
      60,
      () => {
        steps.push('release');
        return true;
      },
    );
    await sleep(120);
    expect(runs).toBe(0); // no work yet: nothing to collect
    finished(ctx);
    await sleep(30);
    finished(ctx); // still busy: the idle time restarts
    await sleep(40);
    expect(runs).toBe(0);
    await sleep(80);
    expect(runs).toBe(1);
    await sleep(120);
    expect(runs).toBe(1); // once per idle period
    expect(steps).toEqual(['collect', 'release']); // what the collection freed goes back to the system

    const pending = new Promise<void>(() => undefined);
    ctx.inFlight.add(pending);
    finished(ctx);
    await sleep(150);
    expect(runs).toBe(1); // a request still running: no pause now
    ctx.inFlight.delete(pending);
    await sleep(100);
    expect(runs).toBe(2);

    finished(ctx);
    for (const hook of ctx.onClose) hook();
    await sleep(120);
    expect(runs).toBe(2); // closed: the timer is gone
  });
});

describe('the idle collection', () => {
  it('runs two full collections and gives back the heap V8 grew under load', () => {
    const gc = exposeGc()!;
    let calls = 0;
    idleCollection(() => {
      calls++;
      gc();
    })();
    expect(calls).toBe(2);
    // a burst of garbage like a load of large bodies: the heap grows, then all of it dies
    let keep: unknown[] | undefined = [];
    for (let r = 0; r < 40; r++) {
      const batch: unknown[] = [];
      for (let i = 0; i < 4000; i++) batch.push({ s: `${'x'.repeat(100)}${i}:${r}`, n: [i, r] });
      keep.push(batch);
      if (keep.length > 20) keep.shift();
    }
    const loaded = process.memoryUsage().heapTotal;
    keep = undefined;
    idleCollection(gc)();
    const after = process.memoryUsage().heapTotal;
    expect(after).toBeLessThan(loaded - 20 * 1024 * 1024);
  });
});
