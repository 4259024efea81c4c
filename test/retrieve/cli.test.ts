import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createMemoryCcrStore } from '../../src/ccr/memory-store.js';
import { retrieveOriginal } from '../../src/cli/retrieve-run.js';
import { contentHash } from '../../src/engine/hash.js';

async function run(hash: string, query?: string): Promise<{ code: number; out: string }> {
  const home = mkdtempSync(join(tmpdir(), 'svc-cli-'));
  const store = createMemoryCcrStore();
  const original = '[{"id": 1, "status": "ok"},\n {"id": 2, "status": "failed"}]';
  await store.put(contentHash(original), original);
  const stdout = new PassThrough();
  let out = '';
  stdout.on('data', (c) => {
    out += c;
  });
  const code = await retrieveOriginal(hash.replace('ORIG', contentHash(original)), {
    env: { SERVICE_HOME: home },
    store,
    stdout,
    stderr: () => undefined,
    ...(query ? { query } : {}),
  });
  rmSync(home, { recursive: true, force: true });
  return { code, out };
}

describe('svc retrieve --query', () => {
  it('prints the whole original, or only the matching items byte for byte', async () => {
    expect(await run('ORIG')).toEqual({
      code: 0,
      out: '[{"id": 1, "status": "ok"},\n {"id": 2, "status": "failed"}]',
    });
    expect(await run('ORIG', 'status=failed')).toEqual({ code: 0, out: '[{"id": 2, "status": "failed"}]' });
  });

  it('svc toin --json reports an empty store', () => {
    const home = mkdtempSync(join(tmpdir(), 'svc-cli-'));
    const out = execFileSync('node', ['bin/run.js', 'toin', '--json'], {
      env: { ...process.env, SERVICE_HOME: home },
      encoding: 'utf8',
    });
    rmSync(home, { recursive: true, force: true });
    expect(JSON.parse(out)).toMatchObject({ schema_version: 1, shapes: [] });
  });
});
