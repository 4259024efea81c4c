import { arch, platform } from 'node:os';
import type { Dispatcher } from 'undici';
import type { RoutePlugin, ServerContext } from '../context.js';
import { undiciParts } from '../proxy/undici-parts.js';

/** How often aggregates are sent while running (also once at shutdown). */
export const TELEMETRY_INTERVAL_MS = 6 * 60 * 60 * 1000;

/** Anonymous aggregates: no content, no keys, no addresses, no model names. */
export interface TelemetryReport {
  sdk: string;
  version: string;
  platform: string;
  arch: string;
  node: string;
  uptime_s: number;
  requests: number;
  requests_by_mode: Record<string, number>;
  tokens_before: number;
  tokens_saved: number;
  compression_failures: number;
}

/** The reports' own dispatcher (undici's global one would load all of undici: see undici-parts.ts). */
let dispatcher: Dispatcher | undefined;

/** Sends one report; failures are logged at debug level and otherwise ignored. */
export async function sendTelemetry(ctx: ServerContext, url: string, report: TelemetryReport): Promise<void> {
  try {
    const { Agent, request } = await undiciParts();
    dispatcher ??= new Agent();
    const target = new URL(url);
    const res = await request(dispatcher, {
      origin: target.origin,
      path: `${target.pathname}${target.search}`,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': `svc/${ctx.version}` },
      body: JSON.stringify(report),
      headersTimeout: 5000,
      bodyTimeout: 5000,
    });
    await res.body.dump();
  } catch (err) {
    ctx.logger.debug('telemetry not sent', { error: String(err) });
  }
}

/**
 * Telemetry (spec 1.10): on unless `--no-telemetry` / `SERVICE_TELEMETRY=off`,
 * and sent only to `SERVICE_TELEMETRY_URL`: with none set, nothing leaves the machine.
 */
export const telemetryRoutes: RoutePlugin = (_app, ctx) => {
  const url = ctx.config.telemetryUrl;
  if (!ctx.config.telemetry || !url) return;
  const totals = { requests: 0, before: 0, saved: 0, failures: 0, modes: {} as Record<string, number> };
  ctx.bus.on('request.finished', (e) => {
    totals.requests += 1;
    totals.before += e.tokensBefore;
    totals.saved += e.tokensSaved;
    if (e.compressionFailed) totals.failures += 1;
    totals.modes[e.mode] = (totals.modes[e.mode] ?? 0) + 1;
  });
  const report = (): TelemetryReport => ({
    sdk: ctx.config.sdk,
    version: ctx.version,
    platform: platform(),
    arch: arch(),
    node: process.versions.node,
    uptime_s: Math.round((ctx.now() - ctx.startedAt) / 1000),
    requests: totals.requests,
    requests_by_mode: { ...totals.modes },
    tokens_before: totals.before,
    tokens_saved: totals.saved,
    compression_failures: totals.failures,
  });
  const timer = setInterval(() => void sendTelemetry(ctx, url, report()), TELEMETRY_INTERVAL_MS);
  timer.unref();
  ctx.onClose.push(async () => {
    clearInterval(timer);
    await sendTelemetry(ctx, url, report());
  });
};
