import type { Config } from '../config/options.js';
import type { Logger } from '../log.js';
import { createFileCcrStore, type FileCcrStore } from './file-store.js';

export {
  createFileCcrStore,
  DEFAULT_CCR_MAX_BYTES,
  type FileCcrStore,
  type FileCcrStoreOptions,
} from './file-store.js';
export { createMemoryCcrStore, type MemoryCcrStoreOptions } from './memory-store.js';
export { type CcrStore, putAll } from './store.js';

/**
 * The durable CCR store of a configuration: `ccrPath` (default
 * `~/.svc/ccr`, env `SERVICE_CCR_PATH`), `ccrTtl` seconds, `ccrMaxBytes`.
 */
export function openFileCcrStore(
  config: Pick<Config, 'ccrPath' | 'ccrTtl' | 'ccrMaxBytes'>,
  options: { logger?: Logger; now?: () => number } = {},
): FileCcrStore {
  return createFileCcrStore({
    dir: config.ccrPath,
    ttlMs: config.ccrTtl * 1000,
    maxBytes: config.ccrMaxBytes,
    ...options,
  });
}
