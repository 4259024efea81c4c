import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { publishFinished } from '../../src/server/finished-event.js';
import { finishedEvent, getJson, startServer, type TestServer, tempHome } from './helpers.js';

const BIN = fileURLToPath(new URL('../../bin/run.js', import.meta.url));
const BUILT = fileURLToPath(new URL('../../dist/commands/history.js', import.meta.url));

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

// biome-ignore lint/suspicious/noExplicitAny: tests read command JSON by path
type Json = Record<string, any>;

/** Runs `svc ARGS` with pipes (no TTY) and the test's SERVICE_HOME. */
function svc(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { PATH: process.env.PATH ?? '', HOME: home, SERVICE_HOME: home, NO_COLOR: '1', ...env } },
      (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const portOf = (url: string) => new URL(url).port;
const castNumbers = (v: string, c: { header: boolean }) =>
  c.header ? v : /^[\d.e+-]+$/.test(v) ? Number(v) : v;

async function serverWithSavings(): Promise<TestServer> {
  const s = await startServer(home);
  const day = 24 * 3600 * 1000;
  for (const [ago, saved] of [
    [2 * day, 1000],
    [day, 2000],
    [0, 300],
  ] as const) {
    publishFinished(s.server.ctx, finishedEvent({ time: new Date(Date.now() - ago), tokensSaved: saved }));
  }
  await s.server.ctx.savings!.flush();
  return s;
}

describe('svc stats (command)', () => {
  it('--json prints one snapshot of a live server found through SERVICE_HOST/SERVICE_PORT', async () => {
    expect(existsSync(BUILT), 'dist/ is missing: run `npm run build`').toBe(true);
    srv = await serverWithSavings();
    const res = await svc(['stats', '--json'], { SERVICE_HOST: '127.0.0.1', SERVICE_PORT: portOf(srv.url) });
    expect(res.code, res.stderr).toBe(0);
    const out = JSON.parse(res.stdout) as Json;
    expect(out.source).toBe('server');
    expect(out.stats.requests.total).toBe(3);
    expect(out.stats.tokens.saved).toBe(3300);
    expect(out.stats.persistent_savings.lifetime.tokens_saved).toBe(3300);
  });

  it('with no TTY prints one plain snapshot, live or from the file when the server is down', async () => {
    srv = await serverWithSavings();
    const live = await svc(['stats', '--url', srv.url]);
    expect(live.code, live.stderr).toBe(0);
    expect(live.stdout).toContain(`svc stats: ${srv.url}`);
    expect(live.stdout).toMatch(/Requests\s+total 3/);
    expect(live.stdout).toMatch(/Tokens\s+in \(whole requests\) 3,000\s+saved 3,300 \([\d.]+% of in\)/);
    expect(live.stdout.includes('\u001b[')).toBe(false); // no terminal escapes in a pipe

    const url = srv.url;
    await srv.close();
    srv = undefined;
    const down = await svc(['stats', '--url', url]);
    expect(down.code, down.stderr).toBe(0);
    expect(down.stdout).toContain(`no server answering at ${url}`);
    expect(down.stdout).toMatch(/Lifetime\s+tokens saved 3,300\s+saved \$0\.0083/);
    const json = JSON.parse((await svc(['stats', '--url', url, '--json'])).stdout) as Json;
    expect(json).toMatchObject({ source: 'file', file_state: 'ok', lifetime: { tokens_saved: 3300 } });
  });

  it('refuses a --url that is not http(s)', async () => {
    const res = await svc(['stats', '--url', 'ftp://x']);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('--url');
  });
});

describe('svc history (command)', () => {
  it('prints the same record as GET /stats-history, as JSON and as CSV per series', async () => {
    srv = await serverWithSavings();
    const url = srv.url;
    const hourNow = () => new Date().toISOString().slice(0, 13);
    for (let attempt = 0; ; attempt++) {
      const hour = hourNow();
      try {
        const endpoint = (await getJson<Json>(`${url}/stats-history`)).body;
        const cli = await svc(['history']);
        expect(cli.code, cli.stderr).toBe(0);
        const record = JSON.parse(cli.stdout) as Json;
        expect({ ...record, generated_at: 'x' }).toEqual({ ...endpoint, generated_at: 'x' });
        expect(record.lifetime.tokens_saved).toBe(3300);
        expect(record.series.daily).toHaveLength(3);
        for (const series of ['history', 'hourly', 'daily', 'weekly', 'monthly']) {
          const csv = await svc(['history', '--format', 'csv', '--series', series]);
          expect(csv.code, csv.stderr).toBe(0);
          const rows = parse(csv.stdout, { columns: true, cast: castNumbers });
          expect(rows, series).toEqual(series === 'history' ? endpoint.history : endpoint.series[series]);
          const fromEndpoint = await (await fetch(`${url}/stats-history?format=csv&series=${series}`)).text();
          expect(csv.stdout).toBe(fromEndpoint);
        }
        break;
      } catch (err) {
        // Every read fills the series up to the current hour: once, an hour boundary that fell
        // between two of them (the CLI runs take seconds) makes them differ; compare again.
        if (attempt === 0 && hourNow() !== hour) continue;
        throw err;
      }
    }
  });

  it('--output writes the file, --format table prints a table, --json works, bad --series is refused', async () => {
    srv = await serverWithSavings();
    const file = join(home, 'out', 'daily.csv');
    const written = await svc(['history', '--format', 'csv', '--series', 'daily', '--output', file]);
    expect(written.code, written.stderr).toBe(0);
    expect(written.stdout).toBe('');
    const rows = parse(await readFile(file, 'utf8'), { columns: true, cast: castNumbers }) as Json[];
    expect(rows.map((r) => r.tokens_saved)).toEqual([1000, 2000, 300]);

    const table = await svc(['history', '--format', 'table', '--series', 'daily']);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/period start \(UTC\)/);
    expect(table.stdout).toMatch(/3 daily periods; lifetime 3,300 tokens/);

    const json = await svc(['history', '--json']);
    expect((JSON.parse(json.stdout) as Json).schema_version).toBe(1);

    const bad = await svc(['history', '--series', 'yearly']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/history, hourly, daily,[\s›]+weekly, monthly/);
  });

  it('reads a missing file as empty and reports a malformed one without moving it', async () => {
    const empty = await svc(['history']);
    expect(empty.code, empty.stderr).toBe(0);
    expect((JSON.parse(empty.stdout) as Json).history).toEqual([]);
    await writeFile(join(home, 'proxy_savings.json'), 'not json');
    const res = await svc(['history', '--format', 'csv']);
    expect(res.code).toBe(0);
    expect(res.stderr).toContain('malformed');
    expect(res.stdout).toBe('timestamp,total_tokens_saved,compression_savings_usd\n');
    expect(await readdir(home)).toEqual(['proxy_savings.json']);
  });
});
