import { constants, PerformanceObserver } from 'node:perf_hooks';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createEventBus } from '../../src/events.js';
import { silentLogger } from '../../src/log.js';
import { requestPaths } from '../../src/quiet.js';
import type { ServerContext } from '../../src/server/context.js';
import {
  collectWhenIdle,
  exposeGc,
  exposeScavenge,
  idleCollection,
  scavengeWhenIdle,
  youngGeneration,
} from '../../src/server/idle-gc.js';
import {
  type MockUpstream,
  postMessages,
  replyJson,
  startMockUpstream,
  startSvc,
  type TestSvc,
  until,
} from './helpers.js';
import { MESSAGES_REPLY } from './sse-mocks.js';

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

/** Young-generation collections made by a `gc` call (not by V8 itself) from now on, until `stop`. */
function forcedScavenges(): { count(): number; stop(): void } {
  let n = 0;
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const { kind, flags } = (e as PerformanceEntry & { detail: { kind: number; flags: number } }).detail;
      if (kind === constants.NODE_PERFORMANCE_GC_MINOR && flags & constants.NODE_PERFORMANCE_GC_FLAGS_FORCED)
        n++;
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  return { count: () => n, stop: () => observer.disconnect() };
}

/** Allocates short-lived objects until V8's young generation is at least `share` full. */
function fillYoung(share: number): void {
  let garbage: unknown[] = [];
  for (let i = 0; i < 10_000_000; i++) {
    garbage.push({ i, s: `x${i}` });
    if (i % 256 !== 0) continue;
    const y = youngGeneration()!;
    if (y.used >= y.capacity * share) return;
    if (garbage.length > 100_000) garbage = [];
  }
  throw new Error('the young generation never filled');
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('young-generation collections between requests (issue 19)', () => {
  it('reads the young generation and collects it on demand', async () => {
    const scavenge = exposeScavenge();
    expect(typeof scavenge).toBe('function');
    const forced = forcedScavenges();
    try {
      fillYoung(0.3);
      const before = youngGeneration()!;
      expect(before.capacity).toBeGreaterThan(0);
      scavenge!();
      expect(youngGeneration()!.used).toBeLessThan(before.used); // the garbage went
      await until(() => forced.count() > 0);
    } finally {
      forced.stop();
    }
  });

  it('collects once a finished request leaves none running and the young generation at least half full', async () => {
    const ctx = fakeCtx();
    let young = { used: 6, capacity: 10 };
    let runs = 0;
    scavengeWhenIdle(
      ctx as unknown as ServerContext,
      () => {
        runs++;
      },
      () => young,
    );
    finished(ctx);
    finished(ctx); // two in one turn: one check
    expect(runs).toBe(0); // not inside the event: once the request has left
    await nextTurn();
    expect(runs).toBe(1);

    young = { used: 4, capacity: 10 };
    finished(ctx);
    await nextTurn();
    expect(runs).toBe(1); // more than half free: nothing to gain

    young = { used: 5, capacity: 10 };
    const pending = new Promise<void>(() => undefined);
    ctx.inFlight.add(pending);
    finished(ctx);
    await nextTurn();
    expect(runs).toBe(1); // a request still running: no pause in its way
    ctx.inFlight.delete(pending);

    const leave = requestPaths.enter();
    finished(ctx);
    await nextTurn();
    expect(runs).toBe(1); // one on its path: the same
    leave();

    finished(ctx);
    await nextTurn();
    expect(runs).toBe(2); // exactly half: collected

    finished(ctx);
    for (const hook of ctx.onClose) hook();
    await nextTurn();
    expect(runs).toBe(2); // closed: the check is gone
  });

  it('stops calling a collector that throws (a V8 whose gc takes no options)', async () => {
    const ctx = fakeCtx();
    let calls = 0;
    scavengeWhenIdle(
      ctx as unknown as ServerContext,
      () => {
        calls++;
        throw new TypeError('no options');
      },
      () => ({ used: 9, capacity: 10 }),
    );
    finished(ctx);
    await nextTurn();
    finished(ctx);
    await nextTurn();
    expect(calls).toBe(1);
  });

  describe('in the server', () => {
    let svc: TestSvc | undefined;
    let upstream: MockUpstream | undefined;
    afterEach(async () => {
      await svc?.close();
      await upstream?.close();
      svc = upstream = undefined;
    });

    it('collects the young generation after a proxied request, when none is running', async () => {
      upstream = await startMockUpstream((_r, res) => replyJson(res, 200, MESSAGES_REPLY));
      svc = await startSvc({ flags: { 'messages-api-url': `${upstream.url}/v1` } });
      // the request leaves the young generation mostly full (as a ~91k-token first sight does)
      svc.server.ctx.bus.on('request.finished', () => fillYoung(0.7));
      const forced = forcedScavenges();
      try {
        const body = {
          model: 'claude-sonnet-4-5',
          max_tokens: 64,
          messages: [{ role: 'user', content: 'Hi' }],
        };
        expect((await postMessages(svc.url, JSON.stringify(body))).status).toBe(200);
        await until(() => forced.count() > 0);
        expect(youngGeneration()!.used).toBeLessThan(youngGeneration()!.capacity / 2);
      } finally {
        forced.stop();
      }
    });
  });
});
