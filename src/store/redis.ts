import { Redis } from 'ioredis';
import { SvcError } from '../errors.js';
import type { Logger } from '../log.js';

/** A connection to the shared store, with the key prefix every part uses. */
export interface SharedStore {
  redis: Redis;
  /** Key prefix (`--store-prefix`, default `svc:`). */
  prefix: string;
  /** True while the connection is up; parts degrade while it is false. */
  readonly healthy: boolean;
  key(...parts: string[]): string;
  close(): Promise<void>;
}

/** The URL with any password masked, for logs and errors. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^@/]*)@/, (_m, auth: string) => `//${auth.includes(':') ? `${auth.split(':')[0]}:***` : '***'}@`);
}

export interface ConnectStoreOptions {
  url: string;
  prefix: string;
  logger: Logger;
  /** How long the first connection may take, ms. Default 5000. */
  connectTimeoutMs?: number;
}

/**
 * Connects to Redis (`redis://HOST:PORT/DB`, `rediss://` for TLS, password in
 * the URL). Fails with SVC_STORE_UNAVAILABLE when the first connection does
 * not come up; afterwards reconnects by itself (with capped backoff) and logs
 * losing and regaining the connection. Commands fail fast while it is down
 * (no offline queue), so no request waits on a lost store.
 */
export async function connectSharedStore(options: ConnectStoreOptions): Promise<SharedStore> {
  const { logger, prefix } = options;
  const safeUrl = redactUrl(options.url);
  const redis = new Redis(options.url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: options.connectTimeoutMs ?? 5000,
    retryStrategy: (times) => Math.min(100 * 2 ** Math.min(times, 5), 2000),
  });
  let healthy = false;
  let everUp = false;
  redis.on('ready', () => {
    if (everUp && !healthy) logger.info(`store: reconnected to ${safeUrl}`);
    healthy = true;
    everUp = true;
  });
  redis.on('close', () => {
    if (healthy) logger.warn(`store: lost connection to ${safeUrl}; reconnecting (cache skipped, see README for limits and budgets)`);
    healthy = false;
  });
  redis.on('error', (err: Error) => logger.debug(`store: ${err.message}`));
  try {
    await redis.connect();
    await redis.ping();
  } catch (cause) {
    redis.disconnect();
    throw new SvcError('SVC_STORE_UNAVAILABLE', `cannot reach the store at ${safeUrl}: ${(cause as Error).message}`, { cause });
  }
  return {
    redis,
    prefix,
    get healthy() {
      return healthy;
    },
    key: (...parts) => prefix + parts.join(':'),
    async close() {
      redis.removeAllListeners('close');
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
