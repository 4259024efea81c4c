import { describe, expect, it } from 'vitest';
import { compressJson } from '../../src/engine/compressors/json.js';
import { compressLog } from '../../src/engine/compressors/log.js';
import { compressSearch } from '../../src/engine/compressors/search.js';
import { isNameLike } from '../../src/engine/identifiers.js';
import { parseMarkers } from '../../src/engine/markers.js';
import { ctxOf } from './helpers.js';

interface Order {
  id: string;
  customer: string;
  status: string;
  total_cents: number;
  items: number;
}

/** 160 order records, 36 of them failed (ord_00097 among them). */
function orders(): Order[] {
  const out: Order[] = [];
  for (let i = 0; i < 160; i++) {
    const failed = i % 4 === 1 && i < 144; // 1, 5, ..., 141: 36 failed
    out.push({
      id: `ord_${String(i).padStart(5, '0')}`,
      customer: `cus_${String(1000 + ((i * 37) % 97)).padStart(5, '0')}`,
      status: failed ? 'failed' : 'paid',
      total_cents: 1000 + ((i * 7919) % 20000),
      items: 1 + (i % 5),
    });
  }
  return out;
}

/** The JSON part of a compressed JSON output (the lines before the notes), as plain records. */
function keptRecords(text: string): Order[] {
  const parsed = JSON.parse(text.split('\n')[0]!) as unknown;
  const table = parsed as { $columns?: string[]; $rows?: unknown[][] };
  if (table.$columns && table.$rows)
    return table.$rows.map(
      (r) => Object.fromEntries(table.$columns!.map((k, j) => [k, r[j]])) as unknown as Order,
    );
  return parsed as Order[];
}

describe('JSON markers say what the output holds', () => {
  const all = orders();
  const failedTotal = all.filter((o) => o.status === 'failed').length;

  it('160 orders, 36 failed, the user asks about ord_00097: it is kept and every count is true', () => {
    expect(failedTotal).toBe(36);
    expect(all.find((o) => o.id === 'ord_00097')?.status).toBe('failed');
    const out = compressJson(JSON.stringify(all, null, 2), ctxOf({ userTerms: ['ord_00097'] }))!;
    expect(out.lossy).toBe(true);
    const kept = keptRecords(out.text);
    expect(kept.map((o) => o.id)).toContain('ord_00097');
    const [marker] = parseMarkers(out.text);
    expect(marker).toBeDefined();
    // items omitted: exactly the records missing from the output
    expect(marker!.omitted).toBe(all.length - kept.length);
    const failedKept = kept.filter((o) => o.status === 'failed').length;
    expect(failedKept).toBeLessThan(failedTotal);
    expect(marker!.note).toContain(`${failedKept} of ${failedTotal} error items kept`);
    expect(marker!.note).toContain(`$ kept ${kept.length} of ${all.length}`);
    // every kept record is an original one, unchanged and in order
    const byId = new Map(all.map((o) => [o.id, o]));
    for (const o of kept) expect(o).toEqual(byId.get(o.id));
    const order = kept.map((o) => all.indexOf(byId.get(o.id)!));
    expect(order).toEqual([...order].sort((a, b) => a - b));
  });

  it('items the user named come before error items when both compete for the cap', () => {
    const named = ['ord_00010', 'ord_00022', 'ord_00150', 'ord_00097'];
    const out = compressJson(JSON.stringify(all), ctxOf({ userTerms: named }))!;
    const ids = keptRecords(out.text).map((o) => o.id);
    for (const id of named) expect(ids).toContain(id);
  });

  it('says "N error items kept" only when all N are in the output', () => {
    const few = all.map((o, i) => ({ ...o, status: i === 40 || i === 90 ? 'failed' : 'paid' }));
    const out = compressJson(JSON.stringify(few), ctxOf())!;
    const kept = keptRecords(out.text);
    expect(kept.filter((o) => o.status === 'failed').map((o) => o.id)).toEqual(['ord_00040', 'ord_00090']);
    expect(parseMarkers(out.text)[0]!.note).toContain('2 error items kept');
    expect(parseMarkers(out.text)[0]!.note).not.toContain(' of 2 error');
  });

  it('lists only name-like strings as omitted part mentions, never bare numbers such as :12437', () => {
    // amounts first: the numbers come before the names in every record
    const amountsFirst = all.map(({ total_cents, id }) => ({ total_cents: total_cents + 10000, id }));
    const out = compressJson(JSON.stringify(amountsFirst), ctxOf())!;
    const index = out.text.split('\n').find((l) => l.startsWith('[svc: omitted part mentions: '));
    expect(index).toBeDefined();
    const names = index!.slice('[svc: omitted part mentions: '.length, -1).split(', ');
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) {
      expect(name).toMatch(/[A-Za-z]/);
      expect(out.text.split('\n')[0]).not.toContain(`"${name}"`); // only in the omitted part
    }
    expect(index).not.toMatch(/:\d/);
  });

  it('isNameLike: names, paths, versions and dates yes; bare numbers no', () => {
    for (const yes of ['ord_00097', 'src/app.ts', 'pod-7f9c', '1.24.3', '2025-01-31', 'v2.0.1', '07:00'])
      expect(isNameLike(yes)).toBe(true);
    for (const no of [':12437', '12437', '4.50', ':1234.5', '-90210']) expect(isNameLike(no)).toBe(false);
  });
});

describe('log markers say what the output holds', () => {
  it('counts error lines kept of error lines present', () => {
    const lines: string[] = [];
    for (let i = 0; i < 400; i++) {
      const s = `${String(Math.floor(i / 60)).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}`;
      lines.push(
        i % 10 === 3
          ? `2025-01-01T10:${s}Z ERROR worker-${i % 7} job ${1000 + i} failed: disk full`
          : `2025-01-01T10:${s}Z INFO  worker-${i % 7} job ${1000 + i} done in ${i % 9}ms`,
      );
    }
    const out = compressLog(lines.join('\n'), ctxOf());
    const shown = out.text.split('\n').filter((l) => / ERROR /.test(l)).length;
    const [marker] = parseMarkers(out.text);
    expect(marker!.note).toBe(`${shown} of 40 error lines kept`);
    const omitted = lines.length - out.text.split('\n').filter((l) => l.startsWith('2025-')).length;
    expect(marker!.omitted).toBe(omitted);
  });
});

describe('search markers say what the output holds', () => {
  it('names every file with matches, with the count of its matches, even when none of them is kept', () => {
    const lines: string[] = [];
    for (let f = 0; f < 60; f++)
      for (let k = 0; k < 1 + (f % 3); k++)
        lines.push(
          `src/module_${f}/file_${f}.ts:${10 + k}:  const handler = createHandler(options, registry, ${k});`,
        );
    const out = compressSearch(lines.join('\n'), ctxOf());
    expect(out.lossy).toBe(true);
    for (let f = 0; f < 60; f++) expect(out.text).toContain(`src/module_${f}/file_${f}.ts`);
    const other = out.text
      .split('\n')
      .find((l) => l.startsWith('[svc: ') && l.includes('more files with omitted matches'));
    expect(other).toBeDefined();
    const listed = [...other!.matchAll(/(src\/\S+) \((\d+)\)/g)];
    expect(other).toContain(`[svc: ${listed.length} more files`);
    for (const [, file, count] of listed) {
      const f = Number(/module_(\d+)/.exec(file!)![1]);
      expect(Number(count)).toBe(1 + (f % 3));
      expect(out.text.split('\n').filter((l) => l.startsWith(`${file}:`))).toEqual([]);
    }
    const [marker] = parseMarkers(out.text);
    const keptMatches = out.text.split('\n').filter((l) => /^src\/\S+:\d+:/.test(l)).length;
    expect(marker!.omitted).toBe(lines.length - keptMatches);
  });
});
