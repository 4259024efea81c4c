import { describe, expect, it } from 'vitest';
import { createMemoryCcrStore } from '../../src/ccr/memory-store.js';
import { putAll } from '../../src/ccr/store.js';
import { describeCcrStoreContract } from './contract.js';

describeCcrStoreContract(
  'memory',
  ({ ttlMs, maxBytes, now }) => ({
    store: createMemoryCcrStore({ ttlMs, maxSize: maxBytes, now }),
  }),
  { durable: false },
);

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
