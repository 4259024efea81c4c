import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Redis } from 'ioredis';
import { SvcError } from '../errors.js';
import type { Logger } from '../log.js';

/** A connection to the shared store, with the key prefix every part uses. */
export interface SharedStore {
  redis: Redis;
  /** Key prefix (`--store-prefix`, default `svc:`). */
  prefix: string;
  /** The store's URL with any password masked (for logs, `/stats`, `/v1/toin`). */
  safeUrl: string;
  /** This process's name in the fleet: `host-pid-random`. */
  replicaId: string;
  /** True while the connection is up; parts degrade while it is false. */
  readonly healthy: boolean;
  key(...parts: string[]): string;
  /**
   * Parts report a failed command here. A timeout (the store hangs without
   * closing the connection) marks the store down until it answers a ping
   * again, so later requests skip it at once instead of each waiting.
   */
  noteFailure(err: unknown): void;
  /**
   * Runs `listener` each time the connection comes back after a loss (parts
   * push what they kept locally during the outage). Returns an unsubscribe.
   */
  onReconnect(listener: () => void): () => void;
  close(): Promise<void>;
}

/** The URL with any password masked, for logs and errors. */
export function redactUrl(url: string): string {
  return url.replace(
    /\/\/([^@/]*)@/,
    (_m, auth: string) => `//${auth.includes(':') ? `${auth.split(':')[0]}:***` : '***'}@`,
  );
}

/** Options of `connectSharedStore`. */
export interface ConnectStoreOptions {
  url: string;
  prefix: string;
  logger: Logger;
  /** How long the first connection may take, ms. Default 5000. */
  connectTimeoutMs?: number;
  /**
   * Longest a single command may take, ms (default 1000): a store that hangs
   * without closing its connection fails the command instead of the request.
   */
  commandTimeoutMs?: number;
}

/** Longest wait between reconnection attempts, ms. */
const MAX_BACKOFF_MS = 2000;

/**
 * Connects to Redis (`redis://HOST:PORT/DB`, `rediss://` for TLS, password in
 * the URL). Fails with SVC_STORE_UNAVAILABLE when the first connection does
 * not come up; afterwards reconnects by itself (with capped backoff) and logs
 * losing and regaining the connection. Commands fail fast while it is down
 * (no offline queue, a command timeout), so no request waits on a lost store.
 *
 * @example const store = await connectSharedStore({ url: 'redis://127.0.0.1:6379/0', prefix: 'svc:', logger })
 */
export async function connectSharedStore(options: ConnectStoreOptions): Promise<SharedStore> {
  const { logger, prefix } = options;
  const safeUrl = redactUrl(options.url);
  if (!/^rediss?:\/\//.test(options.url)) {
    throw new SvcError(
      'SVC_BAD_CONFIG',
      `--store must be a redis:// or rediss:// URL (got "${safeUrl.slice(0, 80)}")`,
      { status: 400 },
    );
  }
  const commandTimeoutMs = options.commandTimeoutMs ?? 1000;
  // ioredis is loaded only with --store: it would add ~30 ms and a few MB to every start-up.
  const { Redis } = await import('ioredis');
  const redis = new Redis(options.url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    // Off: with auto-pipelining, a connection lost while a batch is in flight
    // can throw `results[i] is not iterable` outside any promise (ioredis
    // issue 1931), an uncaught exception that would end the server. Seen in
    // test/redis/outage.test.ts under load.
    enableAutoPipelining: false,
    connectTimeout: options.connectTimeoutMs ?? 5000,
    commandTimeout: commandTimeoutMs,
    retryStrategy: (times) => Math.min(100 * 2 ** Math.min(times, 5), MAX_BACKOFF_MS),
  });
  const listeners = new Set<() => void>();
  let healthy = false;
  let everUp = false;
  let probe: NodeJS.Timeout | undefined;
  const stopProbe = () => {
    if (probe) clearInterval(probe);
    probe = undefined;
  };
  const backUp = (how: string) => {
    healthy = true;
    stopProbe();
    logger.info(`store: ${how} ${safeUrl}; shared state is in use again`);
    for (const listener of listeners) {
      try {
        listener();
      } catch (err) {
        logger.error('store: a reconnection hook failed', { error: String(err) });
      }
    }
  };
  redis.on('ready', () => {
    if (everUp && !healthy) backUp('reconnected to');
    healthy = true;
    everUp = true;
  });
  redis.on('close', () => {
    if (healthy) {
      logger.warn(
        `store: lost connection to ${safeUrl}; reconnecting. Meanwhile: cache skipped, rate limits per replica, budget from the last known spend (docs/redis.md)`,
      );
    }
    healthy = false;
    stopProbe();
  });
  const noteFailure = (err: unknown) => {
    if (!healthy || !/timed out/i.test(String((err as Error)?.message ?? err))) return;
    healthy = false;
    logger.warn(
      `store: ${safeUrl} did not answer within ${commandTimeoutMs} ms; treating it as down until it answers again`,
    );
    probe = setInterval(() => {
      if (redis.status !== 'ready') return;
      redis.ping().then(
        () => {
          if (!healthy && probe) backUp('answering again:');
        },
        () => undefined,
      );
    }, 250);
    probe.unref();
  };
  let lastError: Error | undefined;
  redis.on('error', (err: Error) => {
    lastError = err;
    logger.debug(`store: ${err.message}`);
  });
  try {
    await redis.connect();
    await redis.ping();
  } catch (cause) {
    redis.disconnect();
    // The socket's own error (ECONNREFUSED, auth, TLS) says more than ioredis's "Connection is closed".
    const reason = lastError?.message ?? ((cause as Error).message || String(cause));
    throw new SvcError(
      'SVC_STORE_UNAVAILABLE',
      `cannot reach the store at ${safeUrl} (${reason}); check --store / SERVICE_STORE_URL and that Redis is running`,
      { cause },
    );
  }
  logger.info(`store: shared state in ${safeUrl} under the prefix "${prefix}"`);
  return {
    redis,
    prefix,
    safeUrl,
    replicaId: `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`,
    get healthy() {
      return healthy;
    },
    key: (...parts) => prefix + parts.join(':'),
    noteFailure,
    onReconnect(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async close() {
      stopProbe();
      listeners.clear();
      redis.removeAllListeners('close');
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
