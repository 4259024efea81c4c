import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import lockfile from 'proper-lockfile';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/log.js';
import { recordSavings, recordSavingsBatch, SavingsFile } from '../../src/stats/savings-file.js';
import { tempHome } from './helpers.js';

let home: string;
let cleanup: () => Promise<void>;
let path: string;
beforeEach(async () => {
  ({ home, cleanup } = await tempHome());
  path = join(home, 'proxy_savings.json');
});
afterEach(async () => {
  vi.useRealTimers();
  await cleanup();
});

function capturingLogger() {
  const lines: string[] = [];
  return { lines, logger: createLogger({ level: 'debug', write: (l) => lines.push(l) }) };
}

const readJson = async (p: string) => JSON.parse(await readFile(p, 'utf8'));

describe('savings file', () => {
  it('starts empty when the file is missing and creates it on the first flush', async () => {
    const file = new SavingsFile({ path });
    await file.open();
    await expect(readdir(home)).resolves.toEqual([]);
    const view = await file.view();
    expect(view.state).toBe('missing');
    expect(view.data.lifetime.tokens_saved).toBe(0);
    file.record({ time: Date.now(), tokensSaved: 10, savingsUsd: 0.5 });
    expect((await file.view()).data.lifetime.tokens_saved).toBe(10); // pending shows in the view
    await file.close();
    const disk = await readJson(path);
    expect(disk.schema_version).toBe(1);
    expect(disk.lifetime).toMatchObject({ tokens_saved: 10, compression_savings_usd: 0.5, requests: 1 });
  });

  it.each([
    ['not JSON', '{"schema_version": 1, "lifetime": '],
    ['wrong version', '{"schema_version": 7, "lifetime": {"tokens_saved": 1, "compression_savings_usd": 0}}'],
    [
      'bad totals',
      '{"schema_version": 1, "lifetime": {"tokens_saved": "many", "compression_savings_usd": 0}}',
    ],
    ['an array', '[]'],
  ])('moves a malformed file (%s) aside with a warning and begins a fresh one', async (_name, text) => {
    await writeFile(path, text);
    const { lines, logger } = capturingLogger();
    const file = new SavingsFile({ path, logger });
    await file.open();
    const names = await readdir(home);
    const aside = names.find((n) => /^proxy_savings\.json\.corrupt-\d{4}-\d{2}-\d{2}T[\d-]+Z-\d+$/.test(n));
    expect(aside, names.join(',')).toBeDefined();
    expect(await readFile(join(home, aside!), 'utf8')).toBe(text);
    expect(lines.some((l) => l.includes('warn') && l.includes('malformed') && l.includes(aside!))).toBe(true);
    expect((await readJson(path)).lifetime.tokens_saved).toBe(0);
    file.record({ time: Date.now(), tokensSaved: 5, savingsUsd: undefined });
    await file.close();
    expect((await readJson(path)).lifetime).toMatchObject({ tokens_saved: 5, unpriced_tokens_saved: 5 });
  });

  it('coalesces many records into one write, scheduled by the flush timer', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const file = new SavingsFile({ path, flushDelayMs: 2000 });
    for (let i = 0; i < 100; i++) file.record({ time: Date.now(), tokensSaved: 1, savingsUsd: 0.01 });
    expect(file.writes).toBe(0);
    vi.advanceTimersByTime(1999);
    expect(file.writes).toBe(0);
    vi.advanceTimersByTime(1);
    vi.useRealTimers();
    await file.flush(); // waits behind the timer's flush
    expect(file.writes).toBe(1);
    expect((await readJson(path)).lifetime).toMatchObject({
      tokens_saved: 100,
      requests: 100,
      compression_savings_usd: 1,
    });
  });

  it('writes atomically: a reader never sees a partial file and no temp file is left', async () => {
    const file = new SavingsFile({ path, flushDelayMs: 60_000 });
    let reads = 0;
    let stop = false;
    const reader = (async () => {
      while (!stop) {
        const text = await readFile(path, 'utf8').catch(() => undefined);
        if (text !== undefined) {
          JSON.parse(text); // throws on a torn write
          reads += 1;
        }
        await new Promise((r) => setImmediate(r));
      }
    })();
    for (let i = 0; i < 60; i++) {
      file.record({ time: Date.now(), tokensSaved: 3, savingsUsd: 0 });
      await file.flush();
    }
    stop = true;
    await reader;
    expect(reads).toBeGreaterThan(0);
    expect((await readJson(path)).lifetime.tokens_saved).toBe(180);
    expect((await readdir(home)).filter((n) => n.endsWith('.tmp') || n.endsWith('.lock'))).toEqual([]);
  });

  it('adds to what other writers wrote instead of overwriting it', async () => {
    const a = new SavingsFile({ path });
    const b = new SavingsFile({ path });
    for (let i = 0; i < 20; i++) {
      a.record({ time: Date.now(), tokensSaved: 2, savingsUsd: 0.001 });
      b.record({ time: Date.now(), tokensSaved: 3, savingsUsd: 0.002 });
      await Promise.all([a.flush(), b.flush()]);
    }
    await Promise.all([a.close(), b.close()]);
    const disk = await readJson(path);
    expect(disk.lifetime.tokens_saved).toBe(100);
    expect(disk.lifetime.requests).toBe(40);
    expect(disk.lifetime.compression_savings_usd).toBeCloseTo(0.06, 10);
  });

  it('keeps savings it could not write and writes them once the file is writable', async () => {
    const blocked = join(home, 'blocker');
    await writeFile(blocked, 'a file where a folder should be');
    const p = join(blocked, 'proxy_savings.json');
    const { lines, logger } = capturingLogger();
    const file = new SavingsFile({ path: p, logger, flushDelayMs: 60_000 });
    await file.open(); // logs, does not throw
    file.record({ time: Date.now(), tokensSaved: 9, savingsUsd: 0.09 });
    expect(await file.flush(1)).toBe(false);
    expect(lines.some((l) => l.includes('will retry'))).toBe(true);
    file.record({ time: Date.now(), tokensSaved: 1, savingsUsd: 0.01 });
    expect(file.pendingTotal()).toMatchObject({ tokens_saved: 10, requests: 2 });
    await rm(blocked);
    expect(await file.close()).toBe(true);
    expect((await readJson(p)).lifetime).toMatchObject({
      tokens_saved: 10,
      requests: 2,
      compression_savings_usd: 0.1,
    });
  });
});

describe('savings file views', () => {
  it('never wait for a flush stuck on the lock: they show the file as last seen plus what is being written', async () => {
    const file = new SavingsFile({ path, flushDelayMs: 60_000 });
    file.record({ time: Date.now(), tokensSaved: 100, savingsUsd: 0 });
    await file.flush();
    const release = await lockfile.lock(path, { realpath: false }); // another writer holds the lock
    file.record({ time: Date.now(), tokensSaved: 20, savingsUsd: 0 });
    const flushing = file.flush(200);
    await new Promise((r) => setTimeout(r, 50));
    file.record({ time: Date.now(), tokensSaved: 3, savingsUsd: 0 });
    const started = Date.now();
    const view = await file.view();
    expect(Date.now() - started).toBeLessThan(500);
    expect(view.data.lifetime.tokens_saved).toBe(123);
    expect(file.writes).toBe(1);
    await release();
    expect(await flushing).toBe(false); // the 3 tokens recorded meanwhile wait for the next flush
    await file.close();
    expect((await readJson(path)).lifetime.tokens_saved).toBe(123);
  });
});

describe('recordSavings / recordSavingsBatch (for svc compress)', () => {
  it('prices each saving from its model and writes at once', async () => {
    const lifetime = await recordSavings({
      savingsPath: path,
      tokensSaved: 4000,
      model: 'gpt-4o-2024-08-06',
    });
    expect(lifetime).toMatchObject({ tokens_saved: 4000, compression_savings_usd: 0.01, requests: 1 });
    const again = await recordSavings({ savingsPath: path, tokensSaved: 1000, model: 'mystery-model' });
    expect(again).toMatchObject({
      tokens_saved: 5000,
      compression_savings_usd: 0.01,
      unpriced_tokens_saved: 1000,
      cli_tokens_saved: 0,
      cli_runs: 0,
    });
    await recordSavings({ savingsPath: path, tokensSaved: 0, model: 'gpt-4o' });
    expect((await readJson(path)).lifetime.requests).toBe(2);
  });

  it('records a run of several inputs in one write, each in its own period', async () => {
    const lifetime = await recordSavingsBatch({
      savingsPath: path,
      entries: [
        { time: new Date('2026-03-01T10:00:00Z'), model: 'claude-sonnet-4-5', tokensSaved: 1000 },
        { time: Date.parse('2026-03-02T10:00:00Z'), model: 'gpt-4o', tokensSaved: 2000 },
        { model: 'gpt-4o', tokensSaved: 0 },
        { tokensSaved: 7, savingsUsd: 0.5 },
      ],
    });
    expect(lifetime).toMatchObject({
      tokens_saved: 3007,
      requests: 3,
      compression_savings_usd: 0.003 + 0.005 + 0.5,
    });
    const disk = await readJson(path);
    expect(disk.rollups.daily['2026-03-01T00:00:00.000Z'].tokens_saved).toBe(1000);
    expect(disk.rollups.daily['2026-03-02T00:00:00.000Z'].tokens_saved).toBe(2000);
    expect(disk.history).toHaveLength(1);
  });

  it('throws SVC_STORE_UNAVAILABLE when the file cannot be written', async () => {
    await writeFile(join(home, 'blocker'), 'x');
    const savingsPath = join(home, 'blocker', 'proxy_savings.json');
    await expect(recordSavings({ savingsPath, tokensSaved: 5 })).rejects.toMatchObject({
      code: 'SVC_STORE_UNAVAILABLE',
      message: expect.stringContaining(savingsPath),
    });
  });
});
