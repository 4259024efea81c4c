import type { CompressFn } from '../../src/compression.js';
import type { RequestFinishedEvent } from '../../src/events.js';
import type { Logger } from '../../src/log.js';
import type { SvcServer } from '../../src/server/app.js';
import { createFakeCompress } from '../server/fake-engine.js';
import { startSvc } from '../server/helpers.js';

/** A settable clock for the server: `clock.t` is "now" in ms. */
export interface TestClock {
  t: number;
  now: () => number;
  advance(ms: number): void;
}

/** A clock starting at `start`, moved only by the test. */
export function testClock(start: number): TestClock {
  const clock: TestClock = {
    t: start,
    now: () => clock.t,
    advance(ms) {
      clock.t += ms;
    },
  };
  return clock;
}

export interface GuardedSvc {
  url: string;
  server: SvcServer;
  home: string;
  events: RequestFinishedEvent[];
  close(): Promise<void>;
}

export interface GuardedSvcOptions {
  flags?: Record<string, unknown>;
  env?: Record<string, string>;
  now?: () => number;
  logger?: Logger;
  compress?: CompressFn;
  /** Reuse this SERVICE_HOME (restart tests); default a new temp dir, removed on close. */
  home?: string;
}

/** Starts the real server on 127.0.0.1:0 with an injectable clock and SERVICE_HOME in a temp dir (fake engine by default). */
export function startGuardedSvc(options: GuardedSvcOptions = {}): Promise<GuardedSvc> {
  return startSvc({ ...options, compress: options.compress ?? createFakeCompress() });
}

/** A logger that keeps `level message` lines. */
export function recordingLogger(): { lines: string[]; logger: Logger } {
  const lines: string[] = [];
  const push = (level: string) => (m: string) => lines.push(`${level} ${m}`);
  return {
    lines,
    logger: { error: push('error'), warn: push('warn'), info: push('info'), debug: push('debug') },
  };
}
