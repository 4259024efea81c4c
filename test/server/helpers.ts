import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CcrStore } from '../../src/ccr/store.js';
import type { CompressFn } from '../../src/compression.js';
import { resolveConfig } from '../../src/config/index.js';
import type { RequestFinishedEvent } from '../../src/events.js';
import { FORMATS } from '../../src/formats/index.js';
import { type Logger, silentLogger } from '../../src/log.js';
import { createSvcServer, type SvcServer } from '../../src/server/app.js';
import { retrievalTool } from '../../src/server/retrieval/tool.js';
import { BIN } from '../cli/helpers.js';

export interface TestSvc {
  url: string;
  server: SvcServer;
  home: string;
  events: RequestFinishedEvent[];
  close(): Promise<void>;
}

export interface StartSvcOptions {
  flags?: Record<string, unknown>;
  env?: Record<string, string>;
  compress?: CompressFn;
  ccr?: CcrStore;
  /** Server clock (ms since the epoch). */
  now?: () => number;
  logger?: Logger;
  /** Reuse this SERVICE_HOME (restart tests); default a new temp dir, removed on close. */
  home?: string;
}

/** Starts the real server on 127.0.0.1:0 with SERVICE_HOME in a temp dir. */
export async function startSvc(options: StartSvcOptions = {}): Promise<TestSvc> {
  const home = options.home ?? mkdtempSync(join(tmpdir(), 'svc-test-'));
  const config = resolveConfig({
    flags: { port: 0, host: '127.0.0.1', ...options.flags },
    env: { SERVICE_HOME: home, ...options.env },
  });
  const server = await createSvcServer({
    config,
    logger: options.logger ?? silentLogger,
    ...(options.compress ? { compress: options.compress } : {}),
    ...(options.ccr ? { ccr: options.ccr } : {}),
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

/** One request the mock upstream received. */
export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  rawHeaders: string[];
  body: Buffer;
}

export type MockHandler = (
  req: RecordedRequest,
  res: ServerResponse,
  raw: IncomingMessage,
) => void | Promise<void>;

export interface MockUpstream {
  url: string;
  requests: RecordedRequest[];
  server: Server;
  close(): Promise<void>;
}

/** A node:http server on 127.0.0.1:0 that records each request, then calls `handler`. */
export async function startMockUpstream(handler: MockHandler): Promise<MockUpstream> {
  const requests: RecordedRequest[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const rec: RecordedRequest = {
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      rawHeaders: req.rawHeaders,
      body: Buffer.concat(chunks),
    };
    requests.push(rec);
    await handler(rec, res, req);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Sends a JSON reply. */
export function replyJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** A long text of `lines` numbered log lines (compressible by the fake engine). */
export function longText(label: string, lines = 40): string {
  return Array.from(
    { length: lines },
    (_, i) => `${label} line ${i}: the quick brown fox jumps over the lazy dog`,
  ).join('\n');
}

/** Polls until `check` holds (events are emitted after the response ends). */
export async function until(check: () => boolean, timeoutMs = 2000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

/**
 * A forwarded body without the retrieval tool svc adds to requests that hold
 * a marker (issue 6), for comparing the rest byte for byte.
 */
export function withoutRetrievalTool(sent: string): string {
  let out = sent;
  for (const format of Object.values(FORMATS)) {
    const tool = JSON.stringify(retrievalTool(format));
    out = out.replace(`,"tools":[${tool}]}`, '}').replace(`,${tool}`, '');
  }
  return out;
}

/** An answer read to its end. */
export interface ReadAnswer {
  status: number;
  headers: Headers;
  text: string;
}

/**
 * POSTs `body` to `url`'s `/v1/messages` as an Anthropic client does (JSON,
 * an `x-api-key`), and reads the answer to its end.
 */
export async function postMessages(
  url: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<ReadAnswer> {
  const res = await fetch(`${url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-test', ...headers },
    body,
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

export interface ServeProcess {
  child: ChildProcess;
  url: string;
  home: string;
  /** What the process wrote so far. */
  stdout(): string;
  stderr(): string;
}

/**
 * `svc serve` of the built CLI (`BIN`) in a child process on a
 * loopback port, forwarding `/v1/messages` to `upstream`, with SERVICE_HOME a new
 * temp dir; `nodeFlags` go to node. Resolves once it logs that it listens.
 * The caller kills the child and removes `home`.
 */
export async function spawnServe(
  upstream: string,
  flags: string[] = [],
  nodeFlags: string[] = [],
): Promise<ServeProcess> {
  const home = mkdtempSync(join(tmpdir(), 'svc-serve-'));
  const child = spawn(
    process.execPath,
    [
      ...nodeFlags,
      BIN,
      'serve',
      '--port',
      '0',
      '--messages-api-url',
      `${upstream}/v1`,
      '--no-telemetry',
      ...flags,
    ],
    { env: { ...process.env, SERVICE_HOME: home }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => {
    out += d;
  });
  child.stderr!.on('data', (d) => {
    err += d;
  });
  try {
    await until(() => /listening on (http:\/\/\S+)/.test(err), 15_000);
  } catch (e) {
    child.kill('SIGKILL');
    rmSync(home, { recursive: true, force: true });
    throw e;
  }
  return {
    child,
    url: /listening on (http:\/\/\S+)/.exec(err)![1]!,
    home,
    stdout: () => out,
    stderr: () => err,
  };
}
