import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import type { CompressFn } from '../../src/compression.js';
import { resolveConfig } from '../../src/config/index.js';
import type { RequestFinishedEvent } from '../../src/events.js';
import { silentLogger } from '../../src/log.js';
import { createSvcServer, type SvcServer } from '../../src/server/app.js';
import { publishFinished } from '../../src/server/finished-event.js';
import { finishedEvent as statsFinishedEvent } from '../stats/helpers.js';

/** Debian's chromium; `.ci/run` installs it. Never a downloaded browser. */
export const CHROMIUM_PATH = '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface TestServer {
  server: SvcServer;
  url: string;
  home: string;
  close(): Promise<void>;
}

export interface StartServerOptions {
  /** Fixes the server's clock (then `/stats-history` is byte-stable). */
  now?: () => number;
  /** Extra flags, e.g. the mock upstream's address. */
  flags?: Record<string, unknown>;
  compress?: CompressFn;
}

/**
 * The real svc server on 127.0.0.1:0 with its state in a fresh temp
 * SERVICE_HOME. Upstreams point at a closed loopback port unless a test
 * passes its mock's address, so nothing can leave the machine.
 */
export async function startServer(options: StartServerOptions = {}): Promise<TestServer> {
  const home = await mkdtemp(join(tmpdir(), 'svc-dashboard-'));
  const config = resolveConfig({
    flags: {
      port: 0,
      host: '127.0.0.1',
      'compat-api-url': 'http://127.0.0.1:9/v1',
      'messages-api-url': 'http://127.0.0.1:9/v1',
      ...options.flags,
    },
    env: { SERVICE_HOME: home },
  });
  const server = await createSvcServer({
    config,
    logger: silentLogger,
    ...(options.now ? { now: options.now } : {}),
    ...(options.compress ? { compress: options.compress } : {}),
  });
  const url = await server.listen();
  let closed = false;
  return {
    server,
    url,
    home,
    async close() {
      if (!closed) await server.close(500);
      closed = true;
      await rm(home, { recursive: true, force: true });
    },
  };
}

/**
 * A finished proxied request as the proxy emits it, for tests that need many
 * days of history quickly (the proxy stamps its events with the real time).
 */
export function finishedEvent(overrides: Partial<RequestFinishedEvent> = {}): RequestFinishedEvent {
  return statsFinishedEvent({
    tokensBefore: 10_000,
    tokensAfter: 4_000,
    tokensSaved: 6_000,
    transforms: ['router:json:0.4'],
    latencyMs: 40,
    overheadMs: 2,
    usage: { input: 4_000, output: 300, cacheRead: 0, cacheWrite: 0 },
    ...overrides,
  });
}

const DAY_MS = 86_400_000;

/**
 * A mixed day of traffic `daysAgo` days back: compressed requests of varying
 * ratios, one cache hit, one rate-limited and one failed request.
 */
export function trafficDay(daysAgo: number, now = Date.now()): RequestFinishedEvent[] {
  const time = new Date(now - daysAgo * DAY_MS);
  const saved = 2_000 + ((daysAgo * 7919) % 9) * 700;
  return [
    finishedEvent({ time, tokensBefore: 10_000, tokensAfter: 10_000 - saved, tokensSaved: saved }),
    finishedEvent({
      time,
      tokensBefore: 4_000,
      tokensAfter: 1_200,
      tokensSaved: 2_800,
      model: 'claude-sonnet-4-5',
    }),
    finishedEvent({ time, cached: true, mode: 'cached', usage: undefined, upstreamStatus: undefined }),
    finishedEvent({
      time,
      status: 429,
      rateLimited: true,
      mode: 'rejected',
      errorCode: 'SVC_RATE_LIMITED',
      usage: undefined,
      tokensAfter: 10_000,
      tokensSaved: 0,
    }),
    finishedEvent({
      time,
      status: 502,
      upstreamStatus: 502,
      usage: undefined,
      tokensAfter: 10_000,
      tokensSaved: 0,
    }),
  ];
}

/** Emits events as the proxy would, one `request.finished` each. */
export function emitTraffic(server: SvcServer, events: RequestFinishedEvent[]): void {
  for (const event of events) publishFinished(server.ctx, event);
}

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Headless Debian chromium with a fresh profile; every non-loopback request is aborted. */
export async function launchBrowser(): Promise<Browser> {
  const profile = await mkdtemp(join(tmpdir(), 'svc-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 900 },
    acceptDownloads: true,
  });
  await context.route('**/*', (route) => {
    const host = new URL(route.request().url()).hostname;
    if (host === '127.0.0.1' || host === 'localhost' || host === '[::1]') return route.continue();
    return route.abort('blockedbyclient');
  });
  return {
    context,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

export interface DashboardPage {
  page: Page;
  /** Console errors, page errors and failed requests, in order. */
  problems: string[];
  /** Every URL the page requested. */
  requests: string[];
}

/**
 * Opens `/dashboard` (plus `query`) in a new tab, recording problems and
 * requests; `prepare` runs on the tab before it loads (routes, clock).
 */
export async function openDashboard(
  browser: Browser,
  baseUrl: string,
  query = '?poll=300',
  prepare?: (page: Page) => Promise<void>,
): Promise<DashboardPage> {
  const page = await browser.context.newPage();
  await prepare?.(page);
  const problems: string[] = [];
  const requests: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => {
    // An aborted poll (tab hidden, newer poll started) is not a failure of the page.
    if (r.failure()?.errorText !== 'net::ERR_ABORTED')
      problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`);
  });
  page.on('request', (r) => requests.push(r.url()));
  await page.goto(`${baseUrl}/dashboard${query}`);
  return { page, problems, requests };
}

/** Waits until the page has finished `count` polls in total. */
export async function waitForPolls(page: Page, count: number): Promise<void> {
  await page.waitForFunction((n) => Number(document.documentElement.dataset.polls ?? 0) >= n, count);
}

/** Every live figure the page shows: `data-field` path -> raw value and text. */
export async function shownFields(
  page: Page,
  attr = 'data-field',
): Promise<Record<string, { value: unknown; text: string }>> {
  return page.$$eval(
    `[${attr}]`,
    (els, a) =>
      Object.fromEntries(
        els.map((el) => [
          el.getAttribute(a) ?? '',
          { value: JSON.parse((el as HTMLElement).dataset.value ?? 'null'), text: el.textContent ?? '' },
        ]),
      ),
    attr,
  );
}

/** The value at a dotted path of a JSON record. */
export function pick(record: unknown, path: string): unknown {
  let value = record;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}
