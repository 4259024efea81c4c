import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { publishFinished } from '../../src/server/finished-event.js';
import { finishedEvent, startServer, type TestServer, tempHome } from './helpers.js';

// `svc stats --by` and `svc history --by` (issue 18, item 7), run as a user would (bin/run.js, dist/).

const BIN = fileURLToPath(new URL('../../bin/run.js', import.meta.url));
const BUILT = fileURLToPath(new URL('../../dist/commands/stats.js', import.meta.url));

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

function svc(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      {
        env: { PATH: process.env.PATH ?? '', HOME: home, SERVICE_HOME: home, NO_COLOR: '1', COLUMNS: '160' },
      },
      (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

// biome-ignore lint/suspicious/noExplicitAny: tests read command JSON by path
type Json = Record<string, any>;

async function serverWithProjects(): Promise<TestServer> {
  const s = await startServer(home);
  // alpha's requests carry the inputs of the cache-aware estimate, beta's do not (unknown)
  const counterfactual = { original: 1000, cachedPrefix: 0, firstUsage: undefined, forwarded: 400 };
  const send = (project: string, client: string, model: string, tokensSaved: number) =>
    publishFinished(
      s.server.ctx,
      finishedEvent({
        project,
        client,
        model,
        tokensSaved,
        ...(project === 'alpha' ? { counterfactual } : {}),
      }),
    );
  send('alpha', 'claude-code', 'gpt-4o', 600);
  send('alpha', 'codex', 'gpt-4o-mini', 300);
  send('beta', 'openai-sdk', 'gpt-4o', 100);
  await s.server.ctx.savings!.flush();
  return s;
}

describe('svc stats --by and svc history --by', () => {
  it('dist/ is built', () => {
    expect(existsSync(BUILT), 'dist/ is missing: run `npm run build`').toBe(true);
  });

  it('svc stats --by project shows the running server breakdown (table and --json)', async () => {
    srv = await serverWithProjects();
    const url = srv.url;
    const json = await svc(['stats', '--by', 'project', '--url', url, '--json']);
    expect(json.code, json.stderr).toBe(0);
    const view = JSON.parse(json.stdout) as Json;
    expect(view.source).toBe('server');
    expect(view.rows.map((r: Json) => [r.value, r.requests, r.tokens_saved])).toEqual([
      ['alpha', 2, 900],
      ['beta', 1, 100],
    ]);
    const stats = (await (await fetch(`${url}/stats`)).json()) as Json;
    const aware = stats.breakdown.project.alpha.cache_aware_savings_usd;
    expect(aware).not.toBe(0);
    expect(view.rows.map((r: Json) => r.cache_aware_usd)).toEqual([aware, null]);
    const table = await svc(['stats', '--by', 'project', '--url', url]);
    expect(table.stdout).toContain('cache-aware');
    expect(table.stdout).toMatch(/beta.*unknown/);
    const text = await svc(['stats', '--by', 'client', '--url', url]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/claude-code.*\n(.*\n)*.*codex/);
    expect(text.stdout).toContain('openai-sdk');
    const bad = await svc(['stats', '--by', 'colour', '--url', url]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('project, model, client, key');
  });

  it('with no server, svc stats --by reads the lifetime split of the savings file', async () => {
    srv = await serverWithProjects();
    await srv.close();
    srv = undefined;
    const json = await svc(['stats', '--by', 'model', '--url', 'http://127.0.0.1:9', '--json']);
    expect(json.code, json.stderr).toBe(0);
    const view = JSON.parse(json.stdout) as Json;
    expect(view.source).toBe('file');
    expect(view.rows.map((r: Json) => [r.value, r.tokens_saved, r.requests])).toEqual([
      ['gpt-4o', 700, 2],
      ['gpt-4o-mini', 300, 1],
    ]);
  });

  it('svc history --by project --format csv adds up to the lifetime totals', async () => {
    srv = await serverWithProjects();
    const csv = await svc(['history', '--by', 'project', '--format', 'csv']);
    expect(csv.code, csv.stderr).toBe(0);
    const rows = parse(csv.stdout, { columns: true }) as Record<string, string>[];
    expect(rows.map((r) => [r.project, Number(r.tokens_saved)])).toEqual([
      ['alpha', 900],
      ['beta', 100],
    ]);
    const json = await svc(['history', '--by', 'client', '--json']);
    const record = JSON.parse(json.stdout) as Json;
    expect(record.lifetime.tokens_saved).toBe(1000);
    expect(record.values.reduce((n: number, v: Json) => n + v.tokens_saved, 0)).toBe(1000);
  });
});
