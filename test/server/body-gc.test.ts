import { constants, PerformanceObserver } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { noteBodyRead, YOUNG_GC_BODY_BYTES, youngCollection } from '../../src/server/body-gc.js';

const tick = () => new Promise((r) => setImmediate(r));

describe('young-generation collections after request bodies', () => {
  it('collects once every so many bytes of bodies, after the work in progress', async () => {
    let runs = 0;
    const read = youngCollection(() => runs++, 1000);
    read(400);
    read(500);
    await tick();
    expect(runs).toBe(0);
    read(200); // past 1000 bytes: once, not before the current work is done
    expect(runs).toBe(0);
    await tick();
    expect(runs).toBe(1);
    // the count starts again; bodies read while one is pending add no second collection
    read(1500);
    read(1500);
    await tick();
    expect(runs).toBe(2);
  });

  it('does nothing without a collector', async () => {
    const read = youngCollection(undefined, 10);
    read(100);
    await tick();
  });

  it('runs V8’s young-generation collector in the server', async () => {
    const kinds: number[] = [];
    const observer = new PerformanceObserver((list) => {
      for (const e of list.getEntries())
        kinds.push((e as unknown as { detail: { kind: number } }).detail.kind);
    });
    observer.observe({ entryTypes: ['gc'] });
    noteBodyRead(YOUNG_GC_BODY_BYTES);
    await tick();
    await new Promise((r) => setTimeout(r, 50));
    observer.disconnect();
    expect(kinds).toContain(constants.NODE_PERFORMANCE_GC_MINOR);
  });
});
