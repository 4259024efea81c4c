import { utimesSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFileCcrStore } from '../../src/ccr/file-store.js';
import { contentHash } from '../../src/engine/hash.js';
import { silentLogger } from '../../src/log.js';
import { runCli, tempHome } from './helpers.js';

const home = tempHome('svc-retrieve-');
const ccrDir = join(home.dir, '.svc', 'ccr');
const original = '{"id":"ord_1"}\nline two ✓ ünïcödé\n\tno trailing newline';
const hash = contentHash(original);
const old = 'an entry written long ago';
const oldHash = contentHash(old);

beforeAll(async () => {
  const store = createFileCcrStore({ dir: ccrDir, ttlMs: 3_600_000, logger: silentLogger });
  await store.put(hash, original);
  await store.put(oldHash, old);
  await store.close();
  const twoHoursAgo = new Date(Date.now() - 2 * 3_600_000);
  utimesSync(join(ccrDir, oldHash.slice(0, 2), oldHash), twoHoursAgo, twoHoursAgo);
});
afterAll(home.cleanup);

describe('svc retrieve', { timeout: 60_000 }, () => {
  it('prints the stored original byte for byte', async () => {
    const run = await runCli(['retrieve', hash], home.dir);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(original);
    expect(run.stderr).toBe('');
  });

  it('accepts the hash=... form copied from a marker', async () => {
    const run = await runCli(['retrieve', `hash=${hash}`], home.dir);
    expect(run.stdout).toBe(original);
  });

  it.each([
    [
      'an unknown hash',
      () => contentHash('never stored'),
      /is unknown or expired in .*ccr \(entries are kept 7 days: SERVICE_CCR_TTL\)/,
      {},
    ],
    [
      'an expired hash',
      () => oldHash,
      /is unknown or expired in .*ccr \(entries are kept 1 h: SERVICE_CCR_TTL\)/,
      { SERVICE_CCR_TTL: '3600' },
    ],
    [
      'something that is not a hash',
      () => '../../etc/passwd',
      /"\.\.\/\.\.\/etc\/passwd" is not a CCR hash/,
      {},
    ],
  ])('exits 2 with one line for %s', async (_name, hashOf, error, env) => {
    const run = await runCli(['retrieve', hashOf()], home.dir, { env });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^svc retrieve: error: /);
    expect(lines[0]).toMatch(error);
  });

  it('reads the folder named by SERVICE_CCR_PATH', async () => {
    const run = await runCli(['retrieve', hash], home.dir, {
      env: { SERVICE_CCR_PATH: join(home.dir, 'other') },
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(join(home.dir, 'other'));
  });
});
