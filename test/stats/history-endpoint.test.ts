import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { publishFinished } from '../../src/server/finished-event.js';
import { finishedEvent, getJson, startServer, type TestServer, tempHome } from './helpers.js';

let home: string;
let cleanup: () => Promise<void>;
let srv: TestServer | undefined;
let clock: number;
const now = () => clock;
const t = (s: string) => Date.parse(s);
beforeEach(async () => {
  ({ home, cleanup } = await tempHome());
  clock = t('2026-03-04T12:00:00Z');
});
afterEach(async () => {
  await srv?.close();
  srv = undefined;
  await cleanup();
});

// biome-ignore lint/suspicious/noExplicitAny: tests read response JSON by path
type Json = Record<string, any>;

/** Savings spread over three days and two weeks (2026-03-01 is a Sunday). */
function emitSpread(s: TestServer) {
  const spread: Array<[string, number, string]> = [
    ['2026-03-01T10:15:00Z', 1000, 'gpt-4o'],
    ['2026-03-01T10:40:00Z', 500, 'claude-sonnet-4-5'],
    ['2026-03-02T09:00:00Z', 2000, 'gpt-4o'],
    ['2026-03-04T11:59:00Z', 300, 'mystery'],
  ];
  for (const [time, saved, model] of spread) {
    publishFinished(
      s.server.ctx,
      finishedEvent({
        time: new Date(time),
        model,
        tokensBefore: saved * 2,
        tokensAfter: saved,
        tokensSaved: saved,
      }),
    );
  }
}

describe('GET /stats-history', () => {
  it('has every field, UTC rollups with Monday weeks, and CSV that agrees with the JSON', async () => {
    srv = await startServer(home, { now });
    emitSpread(srv);
    const { status, body } = await getJson<Json>(`${srv.url}/stats-history`);
    expect(status).toBe(200);
    expect(Object.keys(body)).toEqual([
      'schema_version',
      'generated_at',
      'lifetime',
      'history',
      'series',
      'exports',
    ]);
    expect(body.schema_version).toBe(1);
    expect(body.generated_at).toBe('2026-03-04T12:00:00.000Z');
    // 1000 + 2000 at $2.5/M, 500 at $3/M; the unknown model's 300 tokens have no USD.
    expect(body.lifetime).toEqual({
      tokens_saved: 3800,
      compression_savings_usd: 0.009,
      requests: 4,
      unpriced_tokens_saved: 300,
      cli_tokens_saved: 0,
      cli_runs: 0,
      cache_aware_savings_usd: 0,
    });
    expect(body.history).toEqual([
      { timestamp: '2026-03-04T12:00:00.000Z', total_tokens_saved: 3800, compression_savings_usd: 0.009 },
    ]);
    expect(body.exports).toEqual({
      default_format: 'json',
      available_formats: ['json', 'csv'],
      available_series: ['history', 'hourly', 'daily', 'weekly', 'monthly'],
      default_series: 'history',
    });
    expect(body.series.daily.map((e: Json) => [e.timestamp, e.tokens_saved, e.total_tokens_saved])).toEqual([
      ['2026-03-01T00:00:00.000Z', 1500, 1500],
      ['2026-03-02T00:00:00.000Z', 2000, 3500],
      ['2026-03-03T00:00:00.000Z', 0, 3500],
      ['2026-03-04T00:00:00.000Z', 300, 3800],
    ]);
    expect(body.series.weekly.map((e: Json) => [e.timestamp, e.tokens_saved])).toEqual([
      ['2026-02-23T00:00:00.000Z', 1500],
      ['2026-03-02T00:00:00.000Z', 2300],
    ]);
    expect(body.series.monthly).toEqual([
      {
        timestamp: '2026-03-01T00:00:00.000Z',
        period_end: '2026-04-01T00:00:00.000Z',
        tokens_saved: 3800,
        compression_savings_usd: 0.009,
        requests: 4,
        unpriced_tokens_saved: 300,
        cli_tokens_saved: 0,
        cli_runs: 0,
        cache_aware_savings_usd: 0,
        total_tokens_saved: 3800,
        total_compression_savings_usd: 0.009,
      },
    ]);
    expect(body.series.hourly[0]).toMatchObject({
      timestamp: '2026-03-01T10:00:00.000Z',
      tokens_saved: 1500,
      requests: 2,
    });
    expect(body.series.hourly.at(-1)).toMatchObject({
      timestamp: '2026-03-04T12:00:00.000Z',
      tokens_saved: 0,
    });
    const allStamps = JSON.stringify(body).match(/\d{4}-\d\d-\d\dT[^"]*/g) ?? [];
    for (const stamp of allStamps) expect(stamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    for (const series of ['history', 'hourly', 'daily', 'weekly', 'monthly']) {
      const res = await fetch(`${srv.url}/stats-history?format=csv&series=${series}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
      expect(res.headers.get('content-disposition')).toContain(`svc-${series}.csv`);
      const rows: Json[] = parse(await res.text(), {
        columns: true,
        cast: (v, c) => (c.header ? v : /^[\d.e+-]+$/.test(v) ? Number(v) : v),
      });
      const expected = series === 'history' ? body.history : body.series[series];
      expect(rows, series).toEqual(expected);
      expect(rows.length).toBeGreaterThan(0);
    }
  });

  it('answers CSV with only a header row when nothing was recorded', async () => {
    srv = await startServer(home, { now });
    const res = await fetch(`${srv.url}/stats-history?format=csv&series=daily`);
    expect(await res.text()).toBe(
      'timestamp,period_end,tokens_saved,compression_savings_usd,requests,unpriced_tokens_saved,total_tokens_saved,total_compression_savings_usd,cli_tokens_saved,cli_runs,cache_aware_savings_usd\n',
    );
    const json = await getJson<Json>(`${srv.url}/stats-history?format=json`);
    expect(json.body.series).toEqual({ hourly: [], daily: [], weekly: [], monthly: [] });
    expect(json.body.history).toEqual([]);
  });

  it.each([
    ['format=xml', /format must be one of json, csv/],
    ['format=csv&series=yearly', /series must be one of history, hourly, daily, weekly, monthly/],
    ['series=', null],
    ['format=csv&format=json', /format must be one of/],
  ])('?%s', async (query, message) => {
    srv = await startServer(home, { now });
    const res = await fetch(`${srv.url}/stats-history?${query}`);
    if (message === null) {
      expect(res.status).toBe(200);
      return;
    }
    expect(res.status).toBe(400);
    const body = (await res.json()) as Json;
    expect(body.error.message).toMatch(message);
    expect(body.error.type).toBe('invalid_request_error');
  });
});

describe('durability across restarts', () => {
  it('serve, record, stop, serve again: lifetime, history and rollups survive and keep adding up', async () => {
    srv = await startServer(home, { now });
    emitSpread(srv);
    const before = (await getJson<Json>(`${srv.url}/stats-history`)).body;
    await srv.close();
    srv = undefined;
    const disk = JSON.parse(await readFile(join(home, 'proxy_savings.json'), 'utf8'));
    expect(disk.schema_version).toBe(1);
    expect(disk.lifetime.tokens_saved).toBe(3800);

    clock = t('2026-03-05T08:00:00Z');
    srv = await startServer(home, { now });
    const stats = (await getJson<Json>(`${srv.url}/stats`)).body;
    expect(stats.requests.total).toBe(0); // session counters restart
    expect(stats.persistent_savings.lifetime).toEqual(before.lifetime);
    expect(stats.persistent_savings.recent_history).toEqual(before.history);
    const after = (await getJson<Json>(`${srv.url}/stats-history`)).body;
    expect(after.history).toEqual(before.history);
    expect(after.series.daily.slice(0, 4)).toEqual(before.series.daily);

    publishFinished(srv.server.ctx, finishedEvent({ time: new Date(clock), tokensSaved: 200 }));
    await srv.close();
    srv = undefined;
    srv = await startServer(home, { now });
    const third = (await getJson<Json>(`${srv.url}/stats-history`)).body;
    expect(third.lifetime.tokens_saved).toBe(4000);
    expect(third.history.map((c: Json) => c.total_tokens_saved)).toEqual([3800, 4000]);
    expect(third.series.daily.at(-1)).toMatchObject({
      timestamp: '2026-03-05T00:00:00.000Z',
      tokens_saved: 200,
      total_tokens_saved: 4000,
    });
  });

  it('survives a malformed file: moved aside with a warning, fresh file, server keeps serving', async () => {
    const path = join(home, 'proxy_savings.json');
    await writeFile(path, '{"schema_version":1,"lifetime":{"tokens_saved":12');
    const lines: string[] = [];
    srv = await startServer(home, {
      now,
      logger: createLogger({ level: 'warn', write: (l) => lines.push(l) }),
    });
    expect(lines.some((l) => l.includes('malformed') && l.includes('.corrupt-'))).toBe(true);
    expect(
      (await readdir(home)).some((n) => n.startsWith('proxy_savings.json.corrupt-2026-03-04T12-00-00-000Z')),
    ).toBe(true);
    const stats = (await getJson<Json>(`${srv.url}/stats`)).body;
    expect(stats.persistent_savings.lifetime.tokens_saved).toBe(0);
    expect(stats.persistent_savings.file_state).toBe('ok');
    publishFinished(srv.server.ctx, finishedEvent({ time: new Date(clock), tokensSaved: 42 }));
    expect((await getJson<Json>(`${srv.url}/stats-history`)).body.lifetime.tokens_saved).toBe(42);

    // Corrupted again while running: /stats keeps answering, the next write moves it aside too.
    await srv.server.ctx.savings!.flush();
    await writeFile(path, 'garbage');
    const during = await getJson<Json>(`${srv.url}/stats`);
    expect(during.status).toBe(200);
    expect(during.body.persistent_savings.file_state).toBe('malformed');
    clock += 1000;
    publishFinished(srv.server.ctx, finishedEvent({ time: new Date(clock), tokensSaved: 8 }));
    await srv.close();
    srv = undefined;
    const disk = JSON.parse(await readFile(path, 'utf8'));
    expect(disk.lifetime.tokens_saved).toBe(8);
    expect((await readdir(home)).filter((n) => n.includes('.corrupt-'))).toHaveLength(2);
  });

  it('survives a missing file, and a missing folder', async () => {
    const nested = join(home, 'deep', 'er', 'savings.json');
    srv = await startServer(home, { now, env: { SERVICE_SAVINGS_PATH: nested } });
    const history = await getJson<Json>(`${srv.url}/stats-history`);
    expect(history.status).toBe(200);
    expect(history.body.lifetime.tokens_saved).toBe(0);
    publishFinished(srv.server.ctx, finishedEvent({ time: new Date(clock), tokensSaved: 5 }));
    await srv.close();
    srv = undefined;
    expect(JSON.parse(await readFile(nested, 'utf8')).lifetime.tokens_saved).toBe(5);
  });
});
