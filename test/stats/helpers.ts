import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveConfig } from '../../src/config/index.js';
import type { RequestFinishedEvent } from '../../src/events.js';
import { type Logger, silentLogger } from '../../src/log.js';
import { createSvcServer, type SvcServer } from '../../src/server/app.js';

/** A temp folder used as SERVICE_HOME; removed by `cleanup`. */
export async function tempHome(): Promise<{ home: string; cleanup: () => Promise<void> }> {
  const home = await mkdtemp(join(tmpdir(), 'svc-stats-'));
  return { home, cleanup: () => rm(home, { recursive: true, force: true }) };
}

export interface TestServer {
  server: SvcServer;
  url: string;
  close: () => Promise<void>;
}

/** Starts the real server on 127.0.0.1:0 with state under `home`. */
export async function startServer(
  home: string,
  options: {
    env?: Record<string, string>;
    flags?: Record<string, unknown>;
    now?: () => number;
    logger?: Logger;
  } = {},
): Promise<TestServer> {
  const config = resolveConfig({
    flags: { port: 0, host: '127.0.0.1', ...options.flags },
    env: { SERVICE_HOME: home, ...options.env },
  });
  const server = await createSvcServer({
    config,
    logger: options.logger ?? silentLogger,
    ...(options.now ? { now: options.now } : {}),
  });
  const url = await server.listen();
  return { server, url, close: () => server.close(500) };
}

/** A finished-request event with plausible defaults. */
export function finishedEvent(overrides: Partial<RequestFinishedEvent> = {}): RequestFinishedEvent {
  return {
    time: new Date(),
    path: '/v1/chat/completions',
    format: 'chat',
    mode: 'optimize',
    model: 'gpt-4o',
    stream: false,
    status: 200,
    upstreamStatus: 200,
    tokensBefore: 1000,
    tokensAfter: 400,
    tokensSaved: 600,
    transforms: [],
    latencyMs: 20,
    overheadMs: 1,
    usage: { input: 400, output: 50, cacheRead: 0, cacheWrite: 0 },
    costUsd: undefined,
    savingsUsd: undefined,
    cached: false,
    rateLimited: false,
    compressionFailed: false,
    errorCode: undefined,
    keyHash: undefined,
    ...overrides,
  };
}

/** GET a path and parse JSON. */
export async function getJson<T = Record<string, unknown>>(
  url: string,
): Promise<{ status: number; body: T }> {
  const res = await fetch(url);
  return { status: res.status, body: (await res.json()) as T };
}
