import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CompressFn } from '../../src/compression.js';
import { resolveConfig } from '../../src/config/index.js';
import type { RequestFinishedEvent } from '../../src/events.js';
import type { Logger } from '../../src/log.js';
import { createSvcServer, type SvcServer } from '../../src/server/app.js';
import { createFakeCompress } from '../server/fake-engine.js';
import { type MockHandler, type MockUpstream, startMockUpstream } from '../server/helpers.js';

/** One `svc serve` of the fleet, with what it logged and the events it emitted. */
export interface Replica {
  name: string;
  url: string;
  server: SvcServer;
  events: RequestFinishedEvent[];
  lines: string[];
}

/** Two (or more) replicas on one Redis, one mock upstream, separate SERVICE_HOMEs. */
export interface Fleet {
  prefix: string;
  upstream: MockUpstream;
  replicas: Replica[];
  close(): Promise<void>;
}

export interface FleetOptions {
  redisUrl: string;
  handler: MockHandler;
  replicas?: number;
  flags?: Record<string, unknown>;
  compress?: CompressFn;
  now?: () => number;
}

function recordingLogger(name: string, lines: string[]): Logger {
  const push = (level: string) => (m: string, f?: Record<string, unknown>) =>
    lines.push(`${name} ${level} ${m}${f ? ` ${JSON.stringify(f)}` : ''}`);
  return { error: push('error'), warn: push('warn'), info: push('info'), debug() {} };
}

/**
 * Starts `replicas` real servers (createSvcServer, 127.0.0.1 port 0) with
 * `--store` on the test's Redis and a prefix of their own, so tests sharing
 * one redis-server never see each other's keys.
 */
export async function startFleet(options: FleetOptions): Promise<Fleet> {
  const prefix = `t${randomBytes(4).toString('hex')}:`;
  const upstream = await startMockUpstream(options.handler);
  const homes: string[] = [];
  const replicas: Replica[] = [];
  for (let i = 0; i < (options.replicas ?? 2); i++) {
    const name = String.fromCharCode(65 + i);
    const home = mkdtempSync(join(tmpdir(), `svc-redis-${name}-`));
    homes.push(home);
    const config = resolveConfig({
      flags: {
        port: 0,
        host: '127.0.0.1',
        store: options.redisUrl,
        'store-prefix': prefix,
        'compat-api-url': `${upstream.url}/v1`,
        'messages-api-url': `${upstream.url}/v1`,
        ...options.flags,
      },
      env: { SERVICE_HOME: home },
    });
    const lines: string[] = [];
    const server = await createSvcServer({
      config,
      logger: recordingLogger(name, lines),
      compress: options.compress ?? createFakeCompress(),
      ...(options.now ? { now: options.now } : {}),
    });
    const events: RequestFinishedEvent[] = [];
    server.ctx.bus.on('request.finished', (e) => events.push(e));
    replicas.push({ name, url: await server.listen(), server, events, lines });
  }
  return {
    prefix,
    upstream,
    replicas,
    async close() {
      await Promise.all(replicas.map((r) => r.server.close(1000)));
      await upstream.close();
      for (const home of homes) rmSync(home, { recursive: true, force: true });
    },
  };
}

/** Polls `check` (sync or async) until it holds. */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
