import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, ROOT } from './helpers.js';

const home = mkdtempSync(join(tmpdir(), 'svc-nowasm-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

async function compress(file: string, nodeFlags: string[]): Promise<{ stdout: string; stderr: string }> {
  return promisify(execFile)(process.execPath, [...nodeFlags, BIN, 'compress', '--no-record', file], {
    env: { PATH: process.env.PATH ?? '', HOME: home, SERVICE_HOME: join(home, '.svc') },
    maxBuffer: 16 * 1024 * 1024,
  });
}

describe('svc compress where Node has no WebAssembly', () => {
  it('gives the same output with the scans in JavaScript (node --jitless)', async () => {
    // the history's identifier and line scans and the pre-token count run as WebAssembly where
    // there is one (docs/perf.md, twenty-first pass); --jitless leaves Node without it
    const samples = readdirSync(join(ROOT, 'fixtures/samples')).filter((f) => f.endsWith('.json'));
    expect(samples.length).toBeGreaterThan(4);
    for (const sample of samples) {
      const file = join(ROOT, 'fixtures/samples', sample);
      const [compiled, plain] = await Promise.all([compress(file, []), compress(file, ['--jitless'])]);
      expect(plain.stderr).toMatch(/expose_wasm/);
      expect(plain.stdout).toBe(compiled.stdout);
      expect(JSON.parse(compiled.stdout).tokens_before).toBeGreaterThan(0);
    }
  });
});
