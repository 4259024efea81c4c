import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFileCcrStore } from '../../src/ccr/file-store.js';
import { openFileCcrStore } from '../../src/ccr/index.js';
import { resolveConfig } from '../../src/config/index.js';
import { contentHash } from '../../src/engine/hash.js';
import { silentLogger } from '../../src/log.js';
import { describeCcrStoreContract } from './contract.js';

const root = mkdtempSync(join(tmpdir(), 'svc-ccr-file-'));
let n = 0;
const freshDir = () => join(root, `store-${n++}`);
afterAll(() => rmSync(root, { recursive: true, force: true }));

// Sweeps run inside put (interval 0) so the size cap is observable right after a write.
describeCcrStoreContract('file', ({ ttlMs, maxBytes, now }) => {
  const dir = freshDir();
  const make = () =>
    createFileCcrStore({ dir, ttlMs, maxBytes, now, sweepIntervalMs: 0, logger: silentLogger });
  return { store: make(), reopen: make };
});

describe('file CCR store', () => {
  const text = 'original tool output\n'.repeat(10);
  const hash = contentHash(text);

  it('stores one plain file per entry under a two-character shard, nothing else left behind', async () => {
    const dir = freshDir();
    const store = createFileCcrStore({ dir, ttlMs: 60_000, logger: silentLogger });
    await store.put(hash, text);
    await store.close();
    expect(readFileSync(join(dir, hash.slice(0, 2), hash), 'utf8')).toBe(text);
    expect(readdirSync(join(dir, hash.slice(0, 2)))).toEqual([hash]);
    expect(readdirSync(join(dir, 'tmp'))).toEqual([]);
    expect(statSync(join(dir, hash.slice(0, 2), hash)).mode & 0o777).toBe(0o600);
  });

  it('never reads a half-written temporary file as an entry', async () => {
    const dir = freshDir();
    await mkdir(join(dir, hash.slice(0, 2)), { recursive: true });
    writeFileSync(join(dir, hash.slice(0, 2), `${hash}.tmp-999-abcd`), text.slice(0, 10));
    const store = createFileCcrStore({ dir, ttlMs: 60_000, logger: silentLogger });
    expect(await store.get(hash)).toBeUndefined();
  });

  it('rejects hashes that are not content hashes (no path escapes)', async () => {
    const store = createFileCcrStore({ dir: freshDir(), ttlMs: 60_000, logger: silentLogger });
    await expect(store.put('../../etc/passwd', 'x')).rejects.toThrow(/not a CCR hash/);
    expect(await store.get('../../etc/passwd')).toBeUndefined();
  });

  it('fails a write with SVC_STORE_UNAVAILABLE when the folder cannot be created', async () => {
    const blocker = join(root, `blocker-${n++}`);
    writeFileSync(blocker, 'a file where the folder should be');
    const store = createFileCcrStore({ dir: join(blocker, 'ccr'), ttlMs: 60_000, logger: silentLogger });
    await expect(store.put(hash, text)).rejects.toMatchObject({ code: 'SVC_STORE_UNAVAILABLE' });
  });

  it('sweeps expired entries and stale temporary files from disk', async () => {
    const dir = freshDir();
    let t = 1_700_000_000_000;
    const store = createFileCcrStore({ dir, ttlMs: 1_000, now: () => t, logger: silentLogger });
    await store.put(hash, text);
    const shard = join(dir, hash.slice(0, 2));
    const stale = join(shard, `${hash}.tmp-1-dead`);
    writeFileSync(stale, 'partial');
    utimesSync(stale, new Date(t - 2 * 3600_000), new Date(t - 2 * 3600_000));
    // and one in the temporary folder writers use now
    const temp = join(dir, 'tmp', `${hash}.tmp-1-dead`);
    writeFileSync(temp, 'partial');
    utimesSync(temp, new Date(t - 2 * 3600_000), new Date(t - 2 * 3600_000));
    t += 5_000;
    const report = await store.sweep();
    expect(report).toMatchObject({ expired: 1, entries: 0, bytes: 0 });
    expect(readdirSync(shard)).toEqual([]);
    expect(readdirSync(join(dir, 'tmp'))).toEqual([]);
  });

  it('removes at open the temporary files of writers killed mid-write, not those of live writers (issue 15 item 7)', async () => {
    const dir = freshDir();
    // writers write in the store's temporary folder (opening lists it alone, not the 256 shards)
    const temp = join(dir, 'tmp');
    await mkdir(temp, { recursive: true });
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)']);
    const dead = child.pid!;
    await new Promise<void>((r) => {
      child.once('exit', () => r());
      child.kill('SIGKILL');
    });
    const orphan = join(temp, `${hash}.tmp-${dead}-0a0b`);
    const live = join(temp, `${hash}.tmp-${process.pid}-0c0d`);
    writeFileSync(orphan, 'partial');
    writeFileSync(live, 'being written');
    const store = createFileCcrStore({ dir, ttlMs: 60_000, logger: silentLogger });
    await store.close();
    expect(readdirSync(temp)).toEqual([`${hash}.tmp-${process.pid}-0c0d`]);
    expect(readFileSync(live, 'utf8')).toBe('being written');
  });

  it('sweeps at most once per interval across instances, using the stamp file', async () => {
    const dir = freshDir();
    let t = 1_700_000_000_000;
    const opts = { dir, ttlMs: 1_000, now: () => t, sweepIntervalMs: 60_000, logger: silentLogger };
    const first = createFileCcrStore(opts);
    await first.put(hash, text);
    await first.close();
    expect(readdirSync(dir)).toContain('.last-sweep');
    t += 5_000; // entry expired, but the last sweep is recent: the next put does not sweep
    const other = 'another entry';
    const second = createFileCcrStore(opts);
    await second.put(contentHash(other), other);
    await second.close();
    expect(readdirSync(join(dir, hash.slice(0, 2)))).toEqual([hash]);
    t += 60_000; // interval passed: a new process sweeps on its first put
    const third = createFileCcrStore(opts);
    await third.put(contentHash(`${other}!`), `${other}!`);
    await third.close();
    expect(readdirSync(join(dir, hash.slice(0, 2)))).toEqual([]);
  });

  it('opens at the configured ccrPath (SERVICE_HOME, SERVICE_CCR_PATH) with ccrTtl', async () => {
    const home = freshDir();
    const config = resolveConfig({ env: { SERVICE_HOME: home } });
    expect(config.ccrPath).toBe(join(home, 'ccr'));
    expect(config.ccrMaxBytes).toBe(512 * 1024 * 1024);
    const store = openFileCcrStore(config, { logger: silentLogger });
    await store.put(hash, text);
    await store.close();
    expect(store.dir).toBe(join(home, 'ccr'));
    expect(readFileSync(join(home, 'ccr', hash.slice(0, 2), hash), 'utf8')).toBe(text);
    const custom = join(home, 'elsewhere');
    expect(resolveConfig({ env: { SERVICE_HOME: home, SERVICE_CCR_PATH: custom } }).ccrPath).toBe(custom);
  });
});
