import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveConfig } from '../../src/config/index.js';
import type { RequestFinishedEvent } from '../../src/events.js';
import { type Logger, silentLogger } from '../../src/log.js';
import { createSvcServer, type SvcServer } from '../../src/server/app.js';
import type { CompressFn } from '../../src/server/engine-call.js';
import { createFakeCompress } from '../server/fake-engine.js';

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

/** Starts the real server on 127.0.0.1:0 with an injectable clock and SERVICE_HOME in a temp dir. */
export async function startGuardedSvc(options: GuardedSvcOptions = {}): Promise<GuardedSvc> {
  const home = options.home ?? mkdtempSync(join(tmpdir(), 'svc-guards-'));
  const config = resolveConfig({
    flags: { port: 0, host: '127.0.0.1', ...options.flags },
    env: { SERVICE_HOME: home, ...options.env },
  });
  const server = await createSvcServer({
    config,
    logger: options.logger ?? silentLogger,
    compress: options.compress ?? createFakeCompress(),
    ...(options.now ? { now: options.now } : {}),
  });
  const events: RequestFinishedEvent[] = [];
  server.ctx.bus.on('request.finished', (e) => events.push(e));
  const url = await server.listen();
  return {
    url,
    server,
    home,
    events,
    async close() {
      await server.close(1000);
      if (!options.home) rmSync(home, { recursive: true, force: true });
    },
  };
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
