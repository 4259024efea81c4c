import type { Config } from '../config/options.js';
import { readSavingsData } from './savings-adapter.js';
import { type Checkpoint, type SavingsAmount, zeroAmount } from './savings-data.js';
import type { StatsRecord } from './stats-record.js';

/** What `svc stats` shows: the server's `/stats`, or the savings file when no server answers. */
export type StatsSnapshot =
  | { source: 'server'; url: string; fetched_at: string; stats: StatsRecord }
  | {
      source: 'file';
      url: string;
      fetched_at: string;
      /** Why the server was not used (connection refused, timeout, HTTP status). */
      reason: string;
      savings_path: string;
      file_state: 'ok' | 'missing' | 'malformed';
      lifetime: SavingsAmount;
      recent_history: Checkpoint[];
    };

export interface LoadSnapshotOptions {
  /** Server base URL, e.g. `http://127.0.0.1:8787`. */
  url: string;
  savingsPath: string;
  /** Give up on the server after this long (ms). Default 1500. */
  timeoutMs?: number;
  now?: () => number;
}

/**
 * The server address `svc stats` asks by default: `SERVICE_HOST`/`SERVICE_PORT`
 * as resolved for `svc serve`, with a wildcard bind host read as loopback.
 */
export function defaultStatsUrl(config: Pick<Config, 'host' | 'port'>): string {
  let host = config.host;
  if (host === '0.0.0.0' || host === '') host = '127.0.0.1';
  if (host === '::') host = '::1';
  if (host.includes(':')) host = `[${host}]`;
  return `http://${host}:${config.port}`;
}

function reasonOf(err: unknown): string {
  const e = err as { name?: string; cause?: { code?: string; message?: string }; message?: string };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return 'no answer in time';
  return e?.cause?.code ?? e?.cause?.message ?? e?.message ?? String(err);
}

/** Asks the server for `/stats`; when none answers, reads the lifetime totals from the savings file. */
export async function loadStatsSnapshot(options: LoadSnapshotOptions): Promise<StatsSnapshot> {
  const now = options.now ?? Date.now;
  const url = options.url.replace(/\/+$/, '');
  let reason: string;
  try {
    const res = await fetch(`${url}/stats`, { signal: AbortSignal.timeout(options.timeoutMs ?? 1500) });
    if (res.ok) {
      const stats = (await res.json()) as StatsRecord;
      if (stats && typeof stats === 'object' && 'requests' in stats) {
        return { source: 'server', url, fetched_at: new Date(now()).toISOString(), stats };
      }
      reason = 'the answer was not a stats record';
    } else reason = `HTTP ${res.status}`;
  } catch (err) {
    reason = reasonOf(err);
  }
  const found = await readSavingsData(options.savingsPath, now()).catch((err) => ({
    state: 'malformed' as const,
    reason: String(err),
  }));
  return {
    source: 'file',
    url,
    fetched_at: new Date(now()).toISOString(),
    reason,
    savings_path: options.savingsPath,
    file_state: found.state,
    lifetime: found.state === 'ok' ? found.data.lifetime : zeroAmount(),
    recent_history: found.state === 'ok' ? found.data.history.slice(-20) : [],
  };
}
