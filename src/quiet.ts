import { setImmediate as yieldToIo } from 'node:timers/promises';

/** Longest stretch of work that may wait before it lets waiting I/O in. */
const SLICE_MS = 0.5;

/**
 * How long work that may wait defers to requests on their path, in all: past
 * that it runs to its end. Bounds what a server under steady load keeps for
 * it (the exchanges it counts), and how late its results come.
 */
export const MAX_DEFER_MS = 100;

/** What a piece of work calls between its steps: nothing to wait for, or a promise to await. */
export type Pause = () => Promise<void> | undefined;

/**
 * The requests this process is serving (from their arrival to the end of
 * their response), and pauses for work that may wait for them: the stats'
 * exact token counts and hashes after a response, memos filled for later
 * turns (issue 19: never before forwarding). Counting a new ~91k-token
 * conversation takes milliseconds; run at once, it delays the next request
 * of a client that sends it within that time. Such work calls its `pause`
 * between small steps: after `SLICE_MS` of work it yields to I/O (a request
 * that arrived meanwhile starts its path), and while any request is on its
 * path it waits, up to `MAX_DEFER_MS` from its start. One per process (the
 * CPU is the process's): the proxy enters its requests; a worker thread,
 * serving none, only yields.
 */
export class RequestPaths {
  private active = 0;
  private readonly waiting = new Set<() => void>();
  private servesLater = true;

  /**
   * Whether this process may serve later requests (turns) that memos filled
   * now would serve: false in a one-shot command (`svc compress`), which
   * exits once it has written its output; then work for them is not done.
   */
  get laterTurns(): boolean {
    return this.servesLater;
  }

  /** This process serves no later request (see `laterTurns`). */
  noLaterTurns(): void {
    this.servesLater = false;
  }

  /** A request arrived: returns what to call when its response has ended (once; later calls do nothing). */
  enter(): () => void {
    this.active++;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.leave();
    };
  }

  private leave(): void {
    this.active--;
    if (this.active > 0) return;
    for (const wake of this.waiting) wake();
    this.waiting.clear();
  }

  /** Requests on their path now. */
  get size(): number {
    return this.active;
  }

  /**
   * A pause for one piece of work, starting now: nothing (go on) until it has
   * worked `SLICE_MS` since it last paused, and once it is `maxDeferMs` old;
   * else a promise that settles after a turn of I/O and, while requests are on
   * their path, when the last of them ends or the time is up.
   */
  pauses(maxDeferMs = MAX_DEFER_MS, now: () => number = () => performance.now()): Pause {
    const until = now() + maxDeferMs;
    let sliceStart = now();
    return () => {
      const t = now();
      if (t - sliceStart < SLICE_MS || t >= until) return undefined;
      return this.pause(until, now).then(() => {
        sliceStart = now();
      });
    };
  }

  /**
   * Runs `work` with a pause of its own once no request is on its path (or
   * `MAX_DEFER_MS` from now); an error it throws is handed to `failed`.
   */
  later(work: (pause: Pause) => Promise<void> | void, failed: (err: unknown) => void): void {
    const until = performance.now() + MAX_DEFER_MS;
    this.pause(until, () => performance.now())
      .then(() => work(this.pauses(Math.max(0, until - performance.now()))))
      .catch(failed);
  }

  private async pause(until: number, now: () => number): Promise<void> {
    // not holding the process open: a CLI that compressed and printed exits
    await yieldToIo(undefined, { ref: false });
    const left = until - now();
    if (this.active === 0 || left <= 0) return;
    await new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.waiting.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, left);
      this.waiting.add(wake);
    });
  }
}

/** This process's requests on their path. */
export const requestPaths = new RequestPaths();
