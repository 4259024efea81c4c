import { afterEach, describe, expect, it } from 'vitest';
import type { CcrStore } from '../../src/ccr/store.js';
import { contentHash } from '../../src/engine/hash.js';

/** What a contract run gives the store under test. */
export interface ContractStoreOptions {
  ttlMs: number;
  /** Size cap: bytes for the file store, estimated bytes (as V8 keeps the strings) for memory. */
  maxBytes: number;
  now: () => number;
}

/** Builds a fresh, empty store; `reopen` (when the store is durable) builds a second instance on the same data. */
export interface ContractSubject {
  store: CcrStore;
  reopen?: () => Promise<CcrStore> | CcrStore;
}

export type ContractFactory = (options: ContractStoreOptions) => Promise<ContractSubject> | ContractSubject;

const entry = (text: string): [string, string] => [contentHash(text), text];

/**
 * The CCR store contract, run against every implementation (memory, file, and
 * Redis later). Each test gets its own store and a manual clock.
 */
export function describeCcrStoreContract(
  name: string,
  factory: ContractFactory,
  { durable = true }: { durable?: boolean } = {},
): void {
  describe(`CCR store contract: ${name}`, () => {
    let t = 1_700_000_000_000;
    const now = () => t;
    const open: CcrStore[] = [];
    const make = async (over: Partial<ContractStoreOptions> = {}) => {
      const subject = await factory({ ttlMs: 60_000, maxBytes: 1_000_000, now, ...over });
      open.push(subject.store);
      return subject;
    };
    afterEach(async () => {
      for (const store of open.splice(0)) await store.close?.();
    });

    it('returns exactly what was put, byte for byte', async () => {
      const { store } = await make();
      const texts = [
        'plain',
        '{"a":[1,2,3]}\n',
        'ünïcödé ✓ 🚀 \u0000 tab\tcrlf\r\n',
        'x'.repeat(200_000),
        '',
      ];
      for (const text of texts) {
        const [hash] = entry(text);
        await store.put(hash, text);
        expect(await store.get(hash)).toBe(text);
      }
    });

    it('answers undefined for an unknown hash', async () => {
      const { store } = await make();
      expect(await store.get(contentHash('never stored'))).toBeUndefined();
    });

    it('is idempotent: putting the same entry twice keeps one readable copy', async () => {
      const { store } = await make();
      const [hash, text] = entry('same content twice');
      await store.put(hash, text);
      await store.put(hash, text);
      expect(await store.get(hash)).toBe(text);
    });

    it('keeps an entry until its TTL and forgets it after', async () => {
      const { store } = await make({ ttlMs: 10_000 });
      const [hash, text] = entry('expiring content');
      await store.put(hash, text);
      t += 9_000;
      expect(await store.get(hash)).toBe(text);
      t += 2_000;
      expect(await store.get(hash)).toBeUndefined();
    });

    it('restarts the TTL when the same entry is put again', async () => {
      const { store } = await make({ ttlMs: 10_000 });
      const [hash, text] = entry('refreshed content');
      await store.put(hash, text);
      t += 8_000;
      await store.put(hash, text);
      t += 8_000;
      expect(await store.get(hash)).toBe(text);
    });

    it('evicts the oldest entries past the size cap and keeps the newest', async () => {
      const { store } = await make({ maxBytes: 1_000 });
      const entries = ['a', 'b', 'c', 'd', 'e'].map((c) => entry(c.repeat(300)));
      for (const [hash, text] of entries) {
        await store.put(hash, text);
        t += 1;
      }
      const kept = await Promise.all(entries.map(([hash]) => store.get(hash)));
      expect(kept[0]).toBeUndefined();
      expect(kept[4]).toBe(entries[4]![1]);
      const bytes = kept.reduce((sum, v) => sum + (v?.length ?? 0), 0);
      expect(bytes).toBeLessThanOrEqual(1_000);
    });

    it('refuses an entry larger than the whole cap instead of dropping it silently', async () => {
      const { store } = await make({ maxBytes: 1_000 });
      const [hash, text] = entry('z'.repeat(1_500));
      await expect(store.put(hash, text)).rejects.toThrow(/cap/);
      expect(await store.get(hash)).toBeUndefined();
    });

    it('takes many concurrent writes without losing one', async () => {
      const { store } = await make();
      const entries = Array.from({ length: 50 }, (_, i) => entry(`concurrent entry ${i} `.repeat(20)));
      await Promise.all(entries.map(([hash, text]) => store.put(hash, text)));
      const back = await Promise.all(entries.map(([hash]) => store.get(hash)));
      expect(back).toEqual(entries.map(([, text]) => text));
    });

    // An in-memory store is not durable by design: it declares so and runs no restart test.
    if (durable) {
      it('survives a restart', async () => {
        const subject = await make();
        expect(subject.reopen, 'a durable store gives the contract a way to reopen it').toBeDefined();
        const [hash, text] = entry('kept across restarts');
        await subject.store.put(hash, text);
        await subject.store.close?.();
        const again = await subject.reopen!();
        open.push(again);
        expect(await again.get(hash)).toBe(text);
      });
    }
  });
}
