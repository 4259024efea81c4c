import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/index.js';
import { createBudgetFile } from '../../src/guards/budget-file.js';
import { createGuards } from '../../src/guards/index.js';
import type { Logger } from '../../src/log.js';

const T = Date.parse('2025-06-15T10:20:00Z');
let home: string;
let lines: string[];
const logger: Logger = {
  error: (m) => lines.push(`error ${m}`),
  warn: (m) => lines.push(`warn ${m}`),
  info: (m) => lines.push(`info ${m}`),
  debug: () => {},
};

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'svc-guards-'));
  lines = [];
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

describe('budget file', () => {
  it('round-trips a snapshot, written atomically', async () => {
    const path = join(home, 'budget.json');
    const file = createBudgetFile(path, { logger });
    void file.write({ daily: { windowStart: 1, spend: 0.5 } });
    void file.write({ daily: { windowStart: 1, spend: 0.75 } });
    await file.flush();
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({
      schema_version: 1,
      periods: { daily: { windowStart: 1, spend: 0.75 } },
    });
    expect(await createBudgetFile(path, { logger }).load()).toEqual({
      daily: { windowStart: 1, spend: 0.75 },
    });
  });

  it('a write resolves once its snapshot or a newer one is in the file; concurrent writes share a write', async () => {
    const path = join(home, 'budget.json');
    const file = createBudgetFile(path, { logger });
    const seen: number[] = [];
    await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        file.write({ daily: { windowStart: 1, spend: i } }).then(() => {
          const spend = JSON.parse(readFileSync(path, 'utf8')).periods.daily.spend as number;
          expect(spend).toBeGreaterThanOrEqual(i);
          seen.push(spend);
        }),
      ),
    );
    expect(seen).toHaveLength(50);
    // 50 writes asked for, far fewer made: the first, then the newest one
    expect(new Set(seen).size).toBeLessThanOrEqual(3);
    expect(JSON.parse(readFileSync(path, 'utf8')).periods.daily.spend).toBe(49);
  });

  it('removes at load the temporary file of a process killed mid-write (issue 15 item 7)', async () => {
    const path = join(home, 'budget.json');
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)']);
    const dead = child.pid!;
    await new Promise<void>((r) => {
      child.once('exit', () => r());
      child.kill('SIGKILL');
    });
    writeFileSync(`${path}.${dead}.tmp`, '{"periods":');
    writeFileSync(`${path}.${process.pid}.tmp`, '{}');
    await createBudgetFile(path, { logger }).load();
    expect(readdirSync(home).sort()).toEqual([`budget.json.${process.pid}.tmp`]);
  });

  it('starts from zero on a missing file silently and on a malformed one with a warning', async () => {
    expect(await createBudgetFile(join(home, 'none.json'), { logger }).load()).toBeUndefined();
    expect(lines).toEqual([]);
    const bad = join(home, 'bad.json');
    writeFileSync(bad, '{"periods": nope');
    expect(await createBudgetFile(bad, { logger }).load()).toBeUndefined();
    expect(lines).toEqual(['warn budget: the budget file is malformed; starting from zero spend']);
  });

  it('drops ill-typed entries and keeps the good ones', async () => {
    const path = join(home, 'budget.json');
    writeFileSync(
      path,
      JSON.stringify({
        periods: { daily: { windowStart: 5, spend: -1 }, monthly: { windowStart: 7, spend: 2 } },
      }),
    );
    expect(await createBudgetFile(path, { logger }).load()).toEqual({
      monthly: { windowStart: 7, spend: 2 },
    });
  });
});

describe('createGuards', () => {
  const config = (flags: Record<string, unknown>) =>
    resolveConfig({ flags: { port: 0, ...flags }, env: { SERVICE_HOME: home } });

  it('keeps the spend of the current windows across a restart and logs the budget state', async () => {
    const first = await createGuards(config({ budget: 2, 'budget-monthly': 50 }), { now: () => T, logger });
    expect(lines).toContain(
      'info budget: daily $2.00, spent $0.00 ($2.00 left), resets 2025-06-16T00:00:00.000Z',
    );
    const d = await first.budget.reserve(1.5);
    if (d.allowed) await first.budget.settle(d.reservation, 1.25);
    await first.close();
    lines = [];
    const second = await createGuards(config({ budget: 2, 'budget-monthly': 50 }), {
      now: () => T + 60_000,
      logger,
    });
    expect((await second.budget.status()).daily.spend).toBe(1.25);
    expect(lines).toContain(
      'info budget: monthly $50.00, spent $1.25 ($48.75 left), resets 2025-07-01T00:00:00.000Z',
    );
    const nextDay = await createGuards(config({ budget: 2 }), { now: () => T + 86_400_000, logger });
    const status = await nextDay.budget.status();
    expect(status.daily.spend).toBe(0);
    expect(status.monthly.spend).toBe(1.25);
  });

  it('writes a hold ahead: in the file before reserve admits, charged at its estimate after a crash', async () => {
    const first = await createGuards(config({ budget: 2 }), { now: () => T, logger });
    const settled = await first.budget.reserve(0.25);
    if (settled.allowed) await first.budget.settle(settled.reservation, 0.1);
    const d = await first.budget.reserve(0.5);
    expect(d.allowed).toBe(true);
    // no flush, no close: the process dies here with the request in flight
    const written = JSON.parse(readFileSync(join(home, 'budget.json'), 'utf8'));
    expect(written.periods.daily.reserved).toBeCloseTo(0.5, 9);
    lines = [];
    const second = await createGuards(config({ budget: 2 }), { now: () => T + 60_000, logger });
    expect((await second.budget.status()).daily.spend).toBeCloseTo(0.6, 9);
    expect(lines).toContain(
      'warn budget: requests in flight when svc last stopped are charged at their estimate',
    );
    await first.close();
  });

  it('leaves out the cache and the rate limiter when disabled', async () => {
    const on = await createGuards(config({}), { now: () => T, logger });
    expect(on.cache).toBeDefined();
    expect(on.rateLimiter).toBeDefined();
    expect(on.budget.enabled).toBe(false);
    const off = await createGuards(config({ cache: false, 'rate-limit': false }), { now: () => T, logger });
    expect(off.cache).toBeUndefined();
    expect(off.rateLimiter).toBeUndefined();
  });
});
