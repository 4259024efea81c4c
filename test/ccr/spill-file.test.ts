import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSpillFile, INDEX_ENTRY_BYTES } from '../../src/ccr/spill-file.js';
import { contentHash } from '../../src/engine/hash.js';

const root = mkdtempSync(join(tmpdir(), 'svc-ccr-spill-file-'));
let n = 0;
afterAll(() => rmSync(root, { recursive: true, force: true }));
const entry = (text: string): [string, string] => [contentHash(text), text];

describe('the CCR spill file', () => {
  it('gives back exactly what was written, leaves no file behind, and counts its index', async () => {
    const dir = join(root, `d${n++}`);
    const spill = createSpillFile({ dir, maxBytes: 1 << 20, maxEntries: 100, ttlMs: 60_000 });
    const texts = ['plain', 'ünïcödé ✓ 🚀 \u0000 tab\tcrlf\r\n', 'x'.repeat(100_000), ''];
    for (const text of texts) await spill.put(...entry(text));
    for (const text of texts) expect(await spill.get(contentHash(text))).toBe(text);
    expect(await spill.get(contentHash('never written'))).toBeUndefined();
    // unlinked once open: the system frees it with the process
    expect(readdirSync(dir)).toEqual([]);
    expect(spill.memoryBytes()).toBe(texts.length * INDEX_ENTRY_BYTES);
    await spill.close();
  });

  it('forgets an entry once its lifetime, counted from when it started, is over', async () => {
    let t = 1_000_000;
    const spill = createSpillFile({
      dir: join(root, `d${n++}`),
      maxBytes: 1 << 20,
      maxEntries: 100,
      ttlMs: 10_000,
      now: () => t,
    });
    const [hash, text] = entry('started five seconds before it was written');
    await spill.put(hash, text, t - 5_000);
    t += 4_000;
    expect(await spill.get(hash)).toBe(text);
    t += 2_000;
    expect(await spill.get(hash)).toBeUndefined();
    await spill.close();
  });

  it('keeps at most its bounds: the oldest entries go first, the newest stay readable', async () => {
    const spill = createSpillFile({
      dir: join(root, `d${n++}`),
      maxBytes: 40_000,
      maxEntries: 1000,
      ttlMs: 60_000,
    });
    const entries = Array.from({ length: 20 }, (_, i) => entry(`${i} `.repeat(2_000)));
    for (const e of entries) await spill.put(...e);
    const back = await Promise.all(entries.map(([hash]) => spill.get(hash)));
    expect(back[0]).toBeUndefined();
    expect(back.at(-1)).toBe(entries.at(-1)![1]);
    const kept = back.filter((v) => v !== undefined);
    expect(kept.reduce((sum, v) => sum + v!.length, 0)).toBeLessThanOrEqual(40_000);
    expect(spill.memoryBytes()).toBe(kept.length * INDEX_ENTRY_BYTES);

    const few = createSpillFile({
      dir: join(root, `d${n++}`),
      maxBytes: 1 << 20,
      maxEntries: 4,
      ttlMs: 60_000,
    });
    for (const e of entries.slice(0, 8)) await few.put(...e);
    expect(few.memoryBytes()).toBeLessThanOrEqual(4 * INDEX_ENTRY_BYTES);
    expect(await few.get(entries[7]![0])).toBe(entries[7]![1]);
    expect(await few.get(entries[0]![0])).toBeUndefined();
    await spill.close();
    await few.close();
  });
});
