import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { publishFinished } from '../../src/server/finished-event.js';
import { finishedEvent, startServer, type TestServer, tempHome } from './helpers.js';

const CHILD = fileURLToPath(new URL('./fixtures/record-savings-child.mjs', import.meta.url));
const DIST = fileURLToPath(new URL('../../dist/src/stats/savings-file.js', import.meta.url));

let home: string;
let cleanup: () => Promise<void>;
let srv: TestServer | undefined;
beforeEach(async () => {
  ({ home, cleanup } = await tempHome());
});
afterEach(async () => {
  await srv?.close();
  srv = undefined;
  await cleanup();
});

function runChild(
  path: string,
  count: number,
  tokens: number,
): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD, path, String(count), String(tokens)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      out += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out }));
  });
}

describe('several writers of one savings file', () => {
  it('a server and four concurrent writer processes: every saving is counted', async () => {
    expect(existsSync(DIST), 'dist/ is missing: run `npm run build` (npm test does it in pretest)').toBe(
      true,
    );
    srv = await startServer(home);
    const path = join(home, 'proxy_savings.json');
    const { ctx } = srv.server;

    const children = [
      runChild(path, 15, 1),
      runChild(path, 15, 10),
      runChild(path, 15, 100),
      runChild(path, 15, 1000),
    ];
    // Meanwhile the server counts requests and flushes often, racing the children for the lock.
    let serverSaved = 0;
    for (let i = 0; i < 40; i++) {
      publishFinished(ctx, finishedEvent({ tokensSaved: 7, tokensBefore: 100, tokensAfter: 93 }));
      serverSaved += 7;
      if (i % 4 === 0) await ctx.savings!.flush();
      await new Promise((r) => setTimeout(r, 5));
    }
    const results = await Promise.all(children);
    for (const r of results) expect(r.code, r.out).toBe(0);
    await srv.close();
    srv = undefined;

    const childSaved = 15 * (1 + 10 + 100 + 1000);
    const disk = JSON.parse(await readFile(path, 'utf8'));
    expect(disk.lifetime.tokens_saved).toBe(serverSaved + childSaved);
    expect(disk.lifetime.requests).toBe(40 + 60);
    expect(disk.lifetime.compression_savings_usd).toBeCloseTo(((serverSaved + childSaved) * 2.5) / 1e6, 9);
    const hourly = Object.values(disk.rollups.hourly) as Array<{ tokens_saved: number }>;
    expect(hourly.reduce((n, b) => n + b.tokens_saved, 0)).toBe(serverSaved + childSaved);
    expect((await readdir(home)).filter((n) => n !== 'proxy_savings.json')).toEqual([]); // no temp or lock left
  });
});
