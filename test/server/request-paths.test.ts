import { describe, expect, it } from 'vitest';
import { MAX_DEFER_MS, RequestPaths } from '../../src/quiet.js';

/** A clock the test moves by hand. */
function manualClock(): { now: () => number; advance: (ms: number) => void } {
  let t = 1000;
  return { now: () => t, advance: (ms) => (t += ms) };
}

/** Resolves after a few turns of the event loop. */
const turns = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

describe('RequestPaths: work after a response waits for the requests on their path (issue 19)', () => {
  it('lets work go on until it has worked a slice, then yields; with no request on its path it goes on at once', async () => {
    const paths = new RequestPaths();
    const clock = manualClock();
    const pause = paths.pauses(MAX_DEFER_MS, clock.now);
    expect(pause()).toBeUndefined();
    clock.advance(0.4);
    expect(pause()).toBeUndefined();
    clock.advance(0.2);
    const p = pause();
    expect(p).toBeInstanceOf(Promise);
    let done = false;
    void p!.then(() => (done = true));
    await turns();
    expect(done).toBe(true);
    // a new slice starts after the pause
    expect(pause()).toBeUndefined();
  });

  it('waits while a request is on its path, and goes on when its response has ended', async () => {
    const paths = new RequestPaths();
    const clock = manualClock();
    const pause = paths.pauses(MAX_DEFER_MS, clock.now);
    const ended = paths.enter();
    expect(paths.size).toBe(1);
    clock.advance(1);
    let done = false;
    void pause()!.then(() => (done = true));
    await turns(20);
    expect(done).toBe(false);
    ended();
    ended(); // once only
    expect(paths.size).toBe(0);
    await turns();
    expect(done).toBe(true);
  });

  it('waits for the last of several requests', async () => {
    const paths = new RequestPaths();
    const clock = manualClock();
    const pause = paths.pauses(MAX_DEFER_MS, clock.now);
    const a = paths.enter();
    const b = paths.enter();
    clock.advance(1);
    let done = false;
    void pause()!.then(() => (done = true));
    a();
    await turns(20);
    expect(done).toBe(false);
    b();
    await turns();
    expect(done).toBe(true);
  });

  it('defers no longer than its bound: past it, work runs to its end without pausing', async () => {
    const paths = new RequestPaths();
    const ended = paths.enter();
    try {
      const pause = paths.pauses(30);
      const t0 = performance.now();
      while (performance.now() - t0 < 1);
      const p = pause();
      expect(p).toBeInstanceOf(Promise);
      await p;
      // the request is still on its path: the wait ended at the bound
      expect(performance.now() - t0).toBeGreaterThanOrEqual(29);
      while (performance.now() - t0 < 32);
      expect(pause()).toBeUndefined();
    } finally {
      ended();
    }
  });

  it('runs later work once no request is on its path', async () => {
    const paths = new RequestPaths();
    const ended = paths.enter();
    const ran: string[] = [];
    paths.later(
      () => {
        ran.push('work');
      },
      (err) => ran.push(String(err)),
    );
    await turns(20);
    expect(ran).toEqual([]);
    ended();
    await turns();
    expect(ran).toEqual(['work']);
    // an error goes to the handler, not out as an unhandled rejection
    paths.later(
      () => {
        throw new Error('boom');
      },
      (err) => ran.push(String(err)),
    );
    await turns();
    expect(ran).toEqual(['work', 'Error: boom']);
  });
});
