import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ShapeObservation } from '../../src/engine/context/types.js';
import { silentLogger } from '../../src/log.js';
import { connectSharedStore, type SharedStore } from '../../src/store/redis.js';
import { openRedisToinStore } from '../../src/toin/redis-store.js';
import { startTestRedis, type TestRedis } from '../helpers/redis-server.js';

const run = promisify(execFile);

let redis: TestRedis;
const stores: SharedStore[] = [];
beforeAll(async () => {
  redis = await startTestRedis();
});
afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()));
  await redis?.destroy();
});

/** One replica's connection (each replica has its own). */
async function replica(prefix: string): Promise<SharedStore> {
  const s = await connectSharedStore({ url: redis.url, prefix, logger: silentLogger });
  stores.push(s);
  return s;
}

const seen = (event: 'compressed' | 'dropped', hash: string): ShapeObservation => ({
  event,
  shape: 'Bash#f00d',
  tool: 'Bash',
  fields: ['id', 'status'],
  hashes: [hash],
});
const h = (c: string) => c.repeat(24);

describe('TOIN counters in Redis', () => {
  it('counts the fleet once per content, maps retrievals across replicas and gives every replica the same advice', async () => {
    const [sa, sb] = [await replica('toin1:'), await replica('toin1:')];
    const opts = { logger: silentLogger, refreshMs: 0, flushDelayMs: 60_000 };
    const a = await openRedisToinStore(sa, opts);
    const b = await openRedisToinStore(sb, opts);
    a.observe([seen('compressed', h('a'))]);
    b.observe([seen('compressed', h('a'))]); // the same output through the other replica
    b.observe([seen('compressed', h('b')), seen('dropped', h('c'))]);
    await a.flush();
    await b.flush();
    // A retrieval on A of content only B compressed still reaches its shape.
    a.retrieved(h('c'), ['status', 'items.id', 'other']);
    await a.flush();
    await b.flush();
    for (const store of [a, b]) {
      expect(store.data().shapes['Bash#f00d']).toMatchObject({
        tool: 'Bash',
        fields: ['id', 'status'],
        compressed: 2,
        dropped: 1,
        retrieved: 1,
        retrievedFields: { status: 1, 'items.id': 1 },
      });
    }
    expect(b.advice()).toEqual(a.advice());
    expect(a.advice().shapes['Bash#f00d']?.importance).toBeGreaterThan(0.5);
    expect(await sa.redis.hget('toin1:toin:s:Bash#f00d', 'compressed')).toBe('2');
    expect(a.path).toContain('redis://127.0.0.1');
    await Promise.all([a.close(), b.close()]);
  });

  it('keeps counts made while Redis is down and sends them after it is back', async () => {
    const s = await replica('toin2:');
    const toin = await openRedisToinStore(s, { logger: silentLogger, refreshMs: 0, flushDelayMs: 60_000 });
    await redis.stop();
    const until = Date.now() + 5000;
    while (s.healthy && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    toin.observe([seen('dropped', h('d'))]);
    await expect(toin.flush()).rejects.toThrow();
    expect(toin.data().shapes['Bash#f00d']?.dropped).toBe(1); // advice keeps the local count
    await redis.start();
    while (!s.healthy && Date.now() < until + 10_000) await new Promise((r) => setTimeout(r, 20));
    await toin.flush();
    expect(await s.redis.hget('toin2:toin:s:Bash#f00d', 'dropped')).toBe('1');
    await toin.close();
  });
});

describe('svc serve --store', () => {
  it('exits non-zero with a clear message when Redis is unreachable at start (password masked)', async () => {
    const err = await run(
      process.execPath,
      ['bin/run.js', 'serve', '--port', '0', '--store', 'redis://:s3cret@127.0.0.1:1/0'],
      {
        env: { ...process.env, SERVICE_HOME: '/tmp/svc-redis-cli-unused', SERVICE_TELEMETRY: 'off' },
        timeout: 20_000,
      },
    ).then(
      () => undefined,
      (e: { code: number; stderr: string }) => e,
    );
    expect(err?.code).toBe(1);
    expect(err?.stderr).toMatch(/cannot reach the store at redis:\/\/:\*\*\*@127\.0\.0\.1:1\/0/);
    expect(err?.stderr).toMatch(/ECONNREFUSED/);
    expect(err?.stderr).not.toContain('s3cret');
  });

  it('SERVICE_STORE_URL selects the store too (same check)', async () => {
    const err = await run(process.execPath, ['bin/run.js', 'serve', '--port', '0'], {
      env: {
        ...process.env,
        SERVICE_HOME: '/tmp/svc-redis-cli-unused',
        SERVICE_STORE_URL: 'redis://127.0.0.1:1/0',
      },
      timeout: 20_000,
    }).then(
      () => undefined,
      (e: { code: number; stderr: string }) => e,
    );
    expect(err?.code).toBe(1);
    expect(err?.stderr).toContain('cannot reach the store');
  });
});
