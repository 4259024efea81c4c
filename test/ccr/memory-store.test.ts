import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createMemoryCcrStore } from '../../src/ccr/memory-store.js';
import { createSpillFile } from '../../src/ccr/spill-file.js';
import { putAll } from '../../src/ccr/store.js';
import { contentHash } from '../../src/engine/hash.js';
import { silentLogger } from '../../src/log.js';
import { describeCcrStoreContract } from './contract.js';

describeCcrStoreContract(
  'memory',
  ({ ttlMs, maxBytes, now }) => ({
    store: createMemoryCcrStore({ ttlMs, maxSize: maxBytes, now }),
  }),
  { durable: false },
);

describe('a conversation’s originals stored again on its next turn', () => {
  it('become the most recent again, with a new lifetime, and their size is counted once', async () => {
    let t = 0;
    const store = createMemoryCcrStore({ maxSize: 1_000, ttlMs: 10_000, now: () => t });
    const a = 'a'.repeat(300);
    const b = 'b'.repeat(300);
    const turn = new Map([[contentHash(a), a]]);
    await putAll(store, turn);
    await store.put(contentHash(b), b);
    const held = store.memoryBytes!();
    t += 8_000;
    await putAll(store, turn); // the next turn: a again, b not
    expect(store.memoryBytes!()).toBe(held);
    const c = 'c'.repeat(300);
    await store.put(contentHash(c), c); // past the cap: the least recent (b) goes
    expect(await store.get(contentHash(b))).toBeUndefined();
    t += 8_000; // 16 s after a was first stored, 8 s after it was stored again
    expect(await store.get(contentHash(a))).toBe(a);
  });
});

describe('the memory store’s size', () => {
  it('counts an original as V8 keeps it: two bytes a character when one is beyond Latin-1', async () => {
    const store = createMemoryCcrStore({ maxSize: 1024 * 1024 });
    await store.put('a'.repeat(24), 'x'.repeat(10_000));
    const latin = store.memoryBytes!();
    expect(latin).toBeGreaterThanOrEqual(10_000);
    expect(latin).toBeLessThan(10_300);
    await store.put('b'.repeat(24), `${'y'.repeat(10_000)}→`);
    expect(store.memoryBytes!() - latin).toBeGreaterThanOrEqual(20_002);
  });

  it('refuses a batch that would evict its own first entries, and keeps what it held', async () => {
    const store = createMemoryCcrStore({ maxSize: 64 * 1024 });
    await store.put('a'.repeat(24), 'kept');
    const batch = new Map([
      ['c'.repeat(24), 'x'.repeat(40_000)],
      ['d'.repeat(24), 'y'.repeat(40_000)],
    ]);
    await expect(putAll(store, batch)).rejects.toThrow(/exceed the store's cap/);
    expect(await store.get('a'.repeat(24))).toBe('kept');
    expect(await store.get('c'.repeat(24))).toBeUndefined();
  });
});

describe('the memory store spilling to a spill file', () => {
  const root = mkdtempSync(join(tmpdir(), 'svc-ccr-spill-'));
  let n = 0;
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const entry = (text: string): [string, string] => [contentHash(text), text];
  /** Puts eight fillers of ~1 KB (past a 4 KiB cap: what was there moves out) and waits for the moves. */
  const fillPastCap = async (store: ReturnType<typeof createMemoryCcrStore>): Promise<void> => {
    for (let i = 0; i < 8; i++) await store.put(...entry(`filler ${i} `.repeat(100)));
    await store.flush();
  };

  function spilling(maxSize: number, ttlMs = 60_000) {
    let t = 1_700_000_000_000;
    const now = () => t;
    const dir = join(root, `s${n++}`);
    let opened = 0;
    const file = createSpillFile({ dir, ttlMs, now, maxBytes: 1024 * 1024, maxEntries: 1000 });
    const store = createMemoryCcrStore({
      maxSize,
      ttlMs,
      now,
      spill: () => {
        opened += 1;
        return file;
      },
    });
    return { store, file, dir, now, tick: (ms: number) => (t += ms), opened: () => opened };
  }

  it('keeps every entry readable past the cap, memory within it, and opens the spill file only then', async () => {
    const s = spilling(4 * 1024);
    const entries = Array.from({ length: 12 }, (_, i) => entry(`original ${i} `.repeat(80)));
    await s.store.put(...entries[0]!);
    expect(s.opened()).toBe(0);
    for (const e of entries.slice(1)) await s.store.put(...e);
    // entries on their way out are held too, at most as many bytes again (puts wait past that)
    expect(s.store.memoryBytes()).toBeLessThanOrEqual(2 * 4 * 1024);
    await s.store.flush();
    // the entries within the cap, and the spill file's index of the others
    expect(s.store.memoryBytes()).toBeLessThanOrEqual(4 * 1024 + s.file.memoryBytes());
    expect(s.file.memoryBytes()).toBeGreaterThan(0);
    expect(s.opened()).toBe(1);
    for (const [hash, text] of entries) expect(await s.store.get(hash)).toBe(text);
    // the oldest left memory: their only copy is the file
    expect(await s.file.get(entries[0]![0])).toBe(entries[0]![1]);
    expect(await s.file.get(entries[11]![0])).toBeUndefined();
    await s.store.close();
  });

  it('an entry moved out keeps the rest of its lifetime, not a new one', async () => {
    const s = spilling(4 * 1024, 10_000);
    const [hash, text] = entry('moved out after five seconds '.repeat(40));
    await s.store.put(hash, text);
    s.tick(5_000);
    await fillPastCap(s.store);
    expect(await s.file.get(hash)).toBe(text);
    s.tick(4_000);
    expect(await s.store.get(hash)).toBe(text);
    s.tick(2_000);
    expect(await s.store.get(hash)).toBeUndefined();
    await s.store.close();
  });

  it('does not move out an entry whose lifetime is over', async () => {
    const s = spilling(4 * 1024, 10_000);
    const [hash, text] = entry('expired before it was evicted '.repeat(40));
    await s.store.put(hash, text);
    s.tick(11_000);
    await fillPastCap(s.store);
    expect(await s.file.get(hash)).toBeUndefined();
    expect(await s.store.get(hash)).toBeUndefined();
    await s.store.close();
  });

  it('takes a batch larger than the cap and an entry larger than it, all readable', async () => {
    const s = spilling(4 * 1024);
    const batch = new Map(Array.from({ length: 6 }, (_, i) => entry(`batch ${i} `.repeat(150))));
    await putAll(s.store, batch);
    const [bigHash, big] = entry('b'.repeat(10_000));
    await s.store.put(bigHash, big);
    await s.store.flush();
    for (const [hash, text] of batch) expect(await s.store.get(hash)).toBe(text);
    expect(await s.store.get(bigHash)).toBe(big);
    expect(s.store.memoryBytes()).toBeLessThanOrEqual(4 * 1024 + s.file.memoryBytes());
    await s.store.close();
  });

  it('a failing file store: the evicted entries are reported lost, memory stays bounded', async () => {
    const warnings: string[] = [];
    const store = createMemoryCcrStore({
      maxSize: 4 * 1024,
      spill: () => ({
        put: () => Promise.reject(new Error('disk full')),
        get: async () => undefined,
      }),
      logger: { ...silentLogger, warn: (m) => warnings.push(m) },
    });
    const entries = Array.from({ length: 8 }, (_, i) => entry(`lost ${i} `.repeat(120)));
    for (const e of entries) await store.put(...e);
    await store.flush();
    expect(store.memoryBytes()).toBeLessThanOrEqual(4 * 1024);
    expect(await store.get(entries[0]![0])).toBeUndefined();
    expect(await store.get(entries[7]![0])).toBe(entries[7]![1]);
    expect(warnings).toEqual(['CCR store: could not move originals out of memory; they are lost']);
  });
});
