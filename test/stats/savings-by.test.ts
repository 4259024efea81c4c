import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildHistoryBy, UNATTRIBUTED } from '../../src/stats/history-by.js';
import { BY_MAX_VALUES, BY_OTHER } from '../../src/stats/savings-data.js';
import { SavingsFile } from '../../src/stats/savings-file.js';
import { tempHome } from './helpers.js';

// The savings file's split by project, model and client (issue 18, item 7):
// bounded per bucket, and files written before it stay readable.

let home: string;
let cleanup: () => Promise<void>;
let path: string;
beforeEach(async () => {
  ({ home, cleanup } = await tempHome());
  path = join(home, 'proxy_savings.json');
});
afterEach(async () => {
  await cleanup();
});

const NOW = Date.parse('2026-11-25T10:30:00.000Z');

describe('savings file: attribution', () => {
  it('reads a file written before the split, and shows its savings as unattributed', async () => {
    const old = {
      schema_version: 1,
      created_at: '2026-11-20T00:00:00.000Z',
      updated_at: '2026-11-24T12:00:00.000Z',
      lifetime: { tokens_saved: 500, compression_savings_usd: 0.01, requests: 2, unpriced_tokens_saved: 0 },
      history: [
        { timestamp: '2026-11-24T12:00:00.000Z', total_tokens_saved: 500, compression_savings_usd: 0.01 },
      ],
      rollups: {
        hourly: {
          '2026-11-24T12:00:00.000Z': {
            tokens_saved: 500,
            compression_savings_usd: 0.01,
            requests: 2,
            unpriced_tokens_saved: 0,
          },
        },
        daily: {},
        weekly: {},
        monthly: {},
      },
    };
    await writeFile(path, JSON.stringify(old));
    const file = new SavingsFile({ path, now: () => NOW });
    await file.open();
    file.record({
      time: NOW,
      tokensSaved: 300,
      savingsUsd: 0.003,
      attribution: { project: 'alpha', model: 'gpt-4o', client: 'codex' },
    });
    await file.close();
    expect((await readdir(home)).filter((f) => f.includes('corrupt'))).toEqual([]);
    const { data } = await file.view();
    expect(data.lifetime.tokens_saved).toBe(800);
    expect(data.lifetime.by?.project).toEqual({ alpha: [300, 0.003, 1, 0] });
    const record = buildHistoryBy(data, 'project', NOW);
    expect(record.values.map((v) => [v.value, v.tokens_saved, v.requests])).toEqual([
      [UNATTRIBUTED, 500, 2],
      ['alpha', 300, 1],
    ]);
    expect(record.series.hourly.map((e) => [e.timestamp, e.value, e.tokens_saved])).toEqual([
      ['2026-11-24T12:00:00.000Z', UNATTRIBUTED, 500],
      ['2026-11-25T10:00:00.000Z', 'alpha', 300],
    ]);
  });

  it('keeps at most BY_MAX_VALUES values per bucket (the rest under other), more in lifetime', async () => {
    const file = new SavingsFile({ path, now: () => NOW });
    await file.open();
    const projects = BY_MAX_VALUES + 4;
    for (let i = 0; i < projects; i++)
      file.record({
        time: NOW,
        tokensSaved: 10,
        savingsUsd: 0.001,
        attribution: { project: `p${i}`, client: 'svc' },
      });
    await file.close();
    const text = await readFile(path, 'utf8');
    expect(text).toContain('"p0": [10,0.001,1,0]'); // one line per row
    const disk = JSON.parse(text);
    const hour = disk.rollups.hourly['2026-11-25T10:00:00.000Z'];
    expect(Object.keys(hour.by.project)).toHaveLength(BY_MAX_VALUES + 1);
    expect(hour.by.project[BY_OTHER]).toEqual([40, 0.004, 4, 0]);
    expect(Object.keys(disk.lifetime.by.project)).toHaveLength(projects);
    expect(hour.by.client).toEqual({ svc: [10 * projects, 0.012, projects, 0] });
    // a second server reading it back sees the same
    const again = new SavingsFile({ path, now: () => NOW });
    await again.open();
    expect(
      (await again.view()).data.rollups.hourly['2026-11-25T10:00:00.000Z']?.by?.project?.[BY_OTHER],
    ).toEqual([40, 0.004, 4, 0]);
    await again.close();
  });

  it('treats a malformed split as a malformed file (moved aside, not half trusted)', async () => {
    await writeFile(
      path,
      JSON.stringify({
        schema_version: 1,
        lifetime: {
          tokens_saved: 1,
          compression_savings_usd: 0,
          requests: 1,
          unpriced_tokens_saved: 0,
          by: { project: { alpha: [1, 0, 'x', 0] } },
        },
      }),
    );
    const file = new SavingsFile({ path, now: () => NOW });
    await file.open();
    await file.close();
    expect((await readdir(home)).some((f) => f.includes('corrupt'))).toBe(true);
  });
});
