#!/usr/bin/env node
// Takes the dashboard screenshots for the README: `npm run screenshot` (builds first).
// Starts the real svc server from dist/ on 127.0.0.1 with a throw-away SERVICE_HOME,
// feeds it 120 days (and, for a second set, one day) of synthetic traffic through its event bus (the same
// `request.finished` events the proxy emits), and photographs /dashboard in
// Debian's chromium (never a downloaded browser). Writes docs/img/dashboard-*.png.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { resolveConfig } = await import(join(root, 'dist/src/config/index.js'));
const { createSvcServer } = await import(join(root, 'dist/src/server/app.js'));
const { silentLogger } = await import(join(root, 'dist/src/log.js'));

const OUT = join(root, 'docs', 'img');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const SHOTS = [
  { name: 'dashboard-wide-light', width: 1280, height: 900, colorScheme: 'light' },
  { name: 'dashboard-wide-dark', width: 1280, height: 900, colorScheme: 'dark' },
  { name: 'dashboard-phone-light', width: 390, height: 844, colorScheme: 'light' },
  { name: 'dashboard-phone-dark', width: 390, height: 844, colorScheme: 'dark' },
];
const HOUR = 3_600_000;
const MODELS = ['gpt-4o', 'claude-sonnet-4-5', 'gpt-4o-mini'];

/** A small deterministic generator, so the pictures are the same on every run. */
function random(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1_664_525 + 1_013_904_223) >>> 0;
    return s / 2 ** 32;
  };
}

function event(time, rnd, overrides = {}) {
  const before = 2_000 + Math.floor(rnd() * 30_000);
  const ratio = 0.15 + rnd() * 0.75;
  const after = Math.round(before * ratio);
  return {
    time: new Date(time),
    path: '/v1/messages',
    format: 'messages',
    mode: 'optimize',
    model: MODELS[Math.floor(rnd() * MODELS.length)],
    stream: rnd() < 0.5,
    status: 200,
    upstreamStatus: 200,
    tokensBefore: before,
    tokensAfter: after,
    tokensSaved: before - after,
    transforms: [],
    latencyMs: 300 + Math.floor(rnd() * 900),
    overheadMs: 2,
    usage: { input: after, output: 200 + Math.floor(rnd() * 800), cacheRead: 0, cacheWrite: 0 },
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

/** `days` of traffic: busier on weekdays, growing over time, some cache hits and failures. */
function traffic(now, days) {
  const rnd = random(42);
  const events = [];
  for (let hoursAgo = days * 24; hoursAgo >= 0; hoursAgo -= 1) {
    const time = now - hoursAgo * HOUR;
    const day = new Date(time).getUTCDay();
    const hour = new Date(time).getUTCHours();
    const busy = (day === 0 || day === 6 ? 0.3 : 1) * (hour >= 7 && hour <= 19 ? 1 : 0.2);
    const growth = 1 + (days * 24 - hoursAgo) / (days * 24);
    const count = Math.round(busy * growth * 2.5 * (0.6 + 0.4 * rnd()));
    for (let i = 0; i < count; i++) {
      const roll = rnd();
      if (roll < 0.08) events.push(event(time, rnd, { cached: true, mode: 'cached', usage: undefined }));
      else if (roll < 0.1)
        events.push(
          event(time, rnd, {
            status: 429,
            rateLimited: true,
            mode: 'rejected',
            tokensSaved: 0,
            usage: undefined,
          }),
        );
      else if (roll < 0.11)
        events.push(event(time, rnd, { status: 502, upstreamStatus: 502, tokensSaved: 0, usage: undefined }));
      else events.push(event(time, rnd));
    }
  }
  return events;
}

/**
 * One set of pictures: `days` of history, files `docs/img/PREFIX-{wide,phone}-{light,dark}.png`.
 * 120 days is the README's picture; one day is what every new install sees first.
 */
async function shoot(days, prefix) {
  const home = await mkdtemp(join(tmpdir(), 'svc-screenshot-'));
  const profile = await mkdtemp(join(tmpdir(), 'svc-chromium-'));
  // Upstreams on a closed loopback port: this script sends no request anywhere but svc.
  const config = resolveConfig({
    flags: {
      port: 0,
      host: '127.0.0.1',
      budget: 25,
      'compat-api-url': 'http://127.0.0.1:9/v1',
      'messages-api-url': 'http://127.0.0.1:9/v1',
    },
    env: { SERVICE_HOME: home },
  });
  // A fixed clock (a weekday afternoon, UTC) so every run draws the same pictures.
  const NOW = Date.parse('2025-06-20T16:20:00Z');
  const server = await createSvcServer({ config, logger: silentLogger, now: () => NOW });
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
  });
  try {
    const url = await server.listen();
    const events = traffic(NOW, days);
    for (const e of events) server.ctx.bus.emit('request.finished', e);
    await context.route('**/*', (route) => {
      const host = new URL(route.request().url()).hostname;
      return host === '127.0.0.1' ? route.continue() : route.abort('blockedbyclient');
    });
    await mkdir(OUT, { recursive: true });
    for (const shot of SHOTS) {
      const page = await context.newPage();
      await page.setViewportSize({ width: shot.width, height: shot.height });
      await page.emulateMedia({ colorScheme: shot.colorScheme });
      await page.goto(`${url}/dashboard`);
      await page.locator('#chart-tokens canvas').waitFor();
      await page.locator('#ratio-chart canvas').waitFor();
      const file = join(OUT, `${shot.name.replace('dashboard', prefix)}.png`);
      await page.screenshot({ path: file, fullPage: true });
      console.log(`wrote ${file}`);
      await page.close();
    }
    console.log(`(${events.length} synthetic requests over ${days} day${days === 1 ? '' : 's'})`);
  } finally {
    await context.close();
    await server.close(500);
    await rm(home, { recursive: true, force: true });
    await rm(profile, { recursive: true, force: true });
  }
}

await shoot(120, 'dashboard');
await shoot(1, 'dashboard-1day');
