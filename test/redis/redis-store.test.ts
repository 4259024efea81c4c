import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisCcrStore } from '../../src/ccr/redis-store.js';
import { isSvcError } from '../../src/errors.js';
import type { Logger } from '../../src/log.js';
import { connectSharedStore, redactUrl, type SharedStore } from '../../src/store/redis.js';
import { startTestRedis, type TestRedis } from '../helpers/redis-server.js';

function recordingLogger(lines: string[]): Logger {
  const push = (m: string) => lines.push(m);
  return { error: push, warn: push, info: push, debug() {} };
}

async function waitFor(check: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

let redis: TestRedis;
let store: SharedStore;
const lines: string[] = [];

beforeAll(async () => {
  redis = await startTestRedis();
  store = await connectSharedStore({ url: redis.url, prefix: 'svctest:', logger: recordingLogger(lines) });
});

afterAll(async () => {
  await store?.close();
  await redis?.destroy();
});

describe('shared store connection', () => {
  it('refuses to start when Redis is unreachable, with a clear error and no password in it', async () => {
    const err = await connectSharedStore({
      url: 'redis://:s3cret@127.0.0.1:1/0',
      prefix: 'x:',
      logger: recordingLogger([]),
      connectTimeoutMs: 500,
    }).catch((e: unknown) => e);
    expect(isSvcError(err) && err.code).toBe('SVC_STORE_UNAVAILABLE');
    expect(String((err as Error).message)).toContain('127.0.0.1:1');
    expect(String((err as Error).message)).not.toContain('s3cret');
  });

  it('masks passwords in URLs', () => {
    expect(redactUrl('rediss://user:pw@host:6380/2')).toBe('rediss://user:***@host:6380/2');
    expect(redactUrl('redis://:pw@host:6379/0')).toBe('redis://:***@host:6379/0');
  });
});

describe('Redis CCR store', () => {
  it('stores originals under the prefix with a TTL', async () => {
    const ccr = createRedisCcrStore(store, { ttlSeconds: 60 });
    await ccr.put('a'.repeat(24), 'original bytes\n');
    expect(await ccr.get('a'.repeat(24))).toBe('original bytes\n');
    expect(await ccr.get('b'.repeat(24))).toBeUndefined();
    const ttl = await store.redis.ttl(`svctest:ccr:${'a'.repeat(24)}`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60);
  });

  it('fails fast while Redis is down, logs the loss and the reconnection, then works again', async () => {
    const ccr = createRedisCcrStore(store, { ttlSeconds: 60 });
    await redis.stop();
    await waitFor(() => !store.healthy);
    const started = Date.now();
    const err = await ccr.get('c'.repeat(24)).catch((e: unknown) => e);
    expect(isSvcError(err) && err.code).toBe('SVC_STORE_UNAVAILABLE');
    await expect(ccr.put('c'.repeat(24), 'x')).rejects.toThrow(/unreachable/);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(lines.some((l) => l.includes('lost connection'))).toBe(true);
    await redis.start();
    await waitFor(() => store.healthy, 10_000);
    expect(lines.some((l) => l.includes('reconnected'))).toBe(true);
    await ccr.put('d'.repeat(24), 'after recovery');
    expect(await ccr.get('d'.repeat(24))).toBe('after recovery');
  });
});
