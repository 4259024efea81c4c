import { createMemoryCcrStore } from '../../src/ccr/memory-store.js';
import { describeCcrStoreContract } from './contract.js';

describeCcrStoreContract(
  'memory',
  ({ ttlMs, maxBytes, now }) => ({
    store: createMemoryCcrStore({ ttlMs, maxSize: maxBytes, now }),
  }),
  { durable: false },
);
