import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { isSvcError } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { connectSharedStore } from '../../src/store/redis.js';
import { startTestRedis, TEST_CA, type TestRedis } from '../helpers/redis-server.js';

const run = promisify(execFile);
let redis: TestRedis | undefined;
afterEach(async () => {
  await redis?.destroy();
  redis = undefined;
});

/** `svc history --store URL --format json` in a child process; resolves with code, stdout, stderr. */
function history(url: string, env: Record<string, string> = {}) {
  return run(process.execPath, ['bin/run.js', 'history', '--store', url, '--format', 'json'], {
    env: { ...process.env, SERVICE_HOME: '/tmp/svc-redis-auth-unused', ...env },
    timeout: 20_000,
  }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => e,
  );
}

describe('store URLs with a password and TLS', () => {
  it('connects with the password from the URL and refuses a wrong one without showing it', async () => {
    redis = await startTestRedis({ password: 'pa55word' });
    const store = await connectSharedStore({ url: redis.url, prefix: 'auth:', logger: silentLogger });
    await store.redis.set('auth:x', '1');
    expect(await store.redis.get('auth:x')).toBe('1');
    await store.close();
    const wrong = redis.url.replace('pa55word', 'nope-nope');
    const err = await connectSharedStore({ url: wrong, prefix: 'auth:', logger: silentLogger }).catch(
      (e: unknown) => e,
    );
    expect(isSvcError(err) && err.code).toBe('SVC_STORE_UNAVAILABLE');
    expect((err as Error).message).toMatch(/WRONGPASS|invalid username-password/i);
    expect((err as Error).message).not.toContain('nope-nope');
  });

  it('rediss:// with a password: svc history --store reads the fleet over TLS (CA from NODE_EXTRA_CA_CERTS)', async () => {
    redis = await startTestRedis({ tls: true, password: 'tls-s3cret' });
    expect(redis.url).toMatch(/^rediss:\/\/:tls-s3cret@127\.0\.0\.1:\d+\/0$/);
    const ok = await history(redis.url, { NODE_EXTRA_CA_CERTS: TEST_CA });
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ schema_version: 1, lifetime: { tokens_saved: 0 } });
    // Without trusting the CA the TLS handshake fails: a clear error, exit 1, no password.
    const untrusted = await history(redis.url);
    expect(untrusted.code).toBe(1);
    expect(untrusted.stderr).toContain('cannot reach the store at rediss://:***@127.0.0.1');
    expect(untrusted.stderr).not.toContain('tls-s3cret');
  });
});
