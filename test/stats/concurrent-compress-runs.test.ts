import { spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { publishFinished } from '../../src/server/finished-event.js';
import { finishedEvent, startServer, type TestServer, tempHome } from './helpers.js';

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

/** Runs the built `svc compress` on the sample files; resolves with the tokens it reports saved. */
function compressRun(files: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/run.js', 'compress', ...files], {
      env: { ...process.env, SERVICE_HOME: home },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      err += d;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`svc compress exited ${code}: ${err}`));
      const lines = out.trim().split('\n');
      resolve(lines.reduce((n, line) => n + (JSON.parse(line) as { tokens_saved: number }).tokens_saved, 0));
    });
  });
}

describe('a server and several concurrent `svc compress` runs on one savings file', () => {
  it('counts every saving', async () => {
    srv = await startServer(home);
    const { ctx } = srv.server;
    const samples = ['agent-session.json', 'logs.chat.json', 'json-array.chat.json', 'grep.messages.json'];
    const runs = [
      compressRun([join('fixtures/samples', samples[0]!), join('fixtures/samples', samples[1]!)]),
      compressRun([join('fixtures/samples', samples[1]!), join('fixtures/samples', samples[2]!)]),
      compressRun([join('fixtures/samples', samples[2]!), join('fixtures/samples', samples[3]!)]),
      compressRun([join('fixtures/samples', samples[3]!), join('fixtures/samples', samples[0]!)]),
    ];
    // Meanwhile the server records savings of its own and flushes often, racing the runs for the lock.
    let serverSaved = 0;
    for (let i = 0; i < 30; i++) {
      publishFinished(ctx, finishedEvent({ tokensSaved: 11, tokensBefore: 100, tokensAfter: 89 }));
      serverSaved += 11;
      if (i % 3 === 0) await ctx.savings!.flush();
      await new Promise((r) => setTimeout(r, 10));
    }
    const cliSaved = (await Promise.all(runs)).reduce((a, b) => a + b, 0);
    expect(cliSaved).toBeGreaterThan(0);
    await srv.close();
    srv = undefined;

    const disk = JSON.parse(await readFile(join(home, 'proxy_savings.json'), 'utf8'));
    // Offline runs are recorded under their own source (cli), apart from what went through the proxy.
    expect(disk.lifetime.tokens_saved).toBe(serverSaved);
    expect(disk.lifetime.cli_tokens_saved).toBe(cliSaved);
    expect((await readdir(home)).filter((n) => n.includes('.lock') || n.includes('.tmp'))).toEqual([]);
  });
});

describe('`svc compress` run 10 times (offline runs are not dollars)', () => {
  it('leaves the lifetime USD and proxy tokens unchanged; its tokens are shown under source cli', async () => {
    srv = await startServer(home);
    const { ctx } = srv.server;
    // One proxied saving first, priced: $3/M x 1000 tokens on claude-sonnet-4-5.
    publishFinished(
      ctx,
      finishedEvent({ model: 'claude-sonnet-4-5', tokensSaved: 1000, tokensBefore: 2000, tokensAfter: 1000 }),
    );
    await ctx.savings!.flush();
    const before = JSON.parse(await readFile(join(home, 'proxy_savings.json'), 'utf8'));
    expect(before.lifetime.compression_savings_usd).toBeCloseTo(0.003, 10);
    const file = join('fixtures/samples', 'json-array.chat.json');
    let cliSaved = 0;
    for (let batch = 0; batch < 2; batch++) {
      const saved = await Promise.all(Array.from({ length: 5 }, () => compressRun([file])));
      cliSaved += saved.reduce((a, b) => a + b, 0);
    }
    expect(cliSaved).toBeGreaterThan(0);
    await ctx.savings!.flush();
    const after = JSON.parse(await readFile(join(home, 'proxy_savings.json'), 'utf8'));
    expect(after.lifetime.compression_savings_usd).toBe(before.lifetime.compression_savings_usd);
    expect(after.lifetime.tokens_saved).toBe(1000);
    expect(after.lifetime.requests).toBe(1);
    expect(after.lifetime.cli_tokens_saved).toBe(cliSaved);
    expect(after.lifetime.cli_runs).toBe(10);
    // /stats-history says the same, apart.
    const history = (await (await fetch(`${srv.url}/stats-history`)).json()) as {
      lifetime: Record<string, number>;
      series: { daily: Array<Record<string, number>> };
    };
    expect(history.lifetime).toMatchObject({
      tokens_saved: 1000,
      compression_savings_usd: 0.003,
      cli_tokens_saved: cliSaved,
      cli_runs: 10,
    });
    expect(history.series.daily.at(-1)).toMatchObject({ tokens_saved: 1000, cli_tokens_saved: cliSaved });
  }, 120_000);
});
