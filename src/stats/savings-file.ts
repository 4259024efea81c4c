import { SvcError } from '../errors.js';
import { type Logger, silentLogger } from '../log.js';
import { savingsCost } from './cost.js';
import { loadPricing, type PricingTable, priceFor } from './pricing.js';
import type { SavingsAmount } from './savings-data.js';
import { SavingsFile } from './savings-store.js';

export { SavingsFile, type SavingsFileOptions, type SavingsView } from './savings-store.js';

/** One saving to record. */
export interface SavingsEntry {
  tokensSaved: number;
  /** When it happened (ms or Date); default now. Decides its rollup periods. */
  time?: number | Date;
  /** Used to price the saving when `savingsUsd` is not given. */
  model?: string | undefined;
  /** USD saved; when omitted it is priced from `model` (unknown model: no USD, counted as unpriced). */
  savingsUsd?: number | undefined;
  /** `cli`: an offline `svc compress` run, recorded as tokens under its own source, never priced. */
  source?: 'proxy' | 'cli';
}

export interface RecordSavingsBatchOptions {
  /** The savings file (`config.savingsPath`). */
  savingsPath: string;
  entries: readonly SavingsEntry[];
  /** A pricing table for `model` (default: the shipped one plus `pricingPath`). */
  pricing?: PricingTable;
  /** `config.pricingPath` (`SERVICE_PRICING_PATH`). */
  pricingPath?: string | undefined;
  now?: () => number;
  logger?: Logger;
}

/**
 * Records savings in the savings file with one locked read-add-write, safely
 * beside other writers (servers, other runs). For `svc compress`: call it once
 * per run with one entry per input. Entries that saved nothing are skipped;
 * with none left nothing is written. Resolves with the lifetime totals after
 * the write; throws SvcError `SVC_STORE_UNAVAILABLE` when the file cannot be
 * written (the caller warns; nothing else is affected).
 *
 * @example
 * await recordSavingsBatch({
 *   savingsPath: config.savingsPath,
 *   pricingPath: config.pricingPath,
 *   entries: records.map((r) => ({ time: r.time, model: r.model, tokensSaved: r.tokensSaved })),
 * });
 */
export async function recordSavingsBatch(options: RecordSavingsBatchOptions): Promise<SavingsAmount> {
  const now = options.now ?? Date.now;
  const file = new SavingsFile({ path: options.savingsPath, now, logger: options.logger ?? silentLogger });
  const entries = options.entries.filter((e) => e.tokensSaved > 0);
  let pricing = options.pricing;
  for (const entry of entries) {
    const time0 =
      entry.time === undefined ? now() : typeof entry.time === 'number' ? entry.time : entry.time.getTime();
    if (entry.source === 'cli') {
      file.record({ time: time0, tokensSaved: entry.tokensSaved, savingsUsd: undefined, source: 'cli' });
      continue;
    }
    let usd = entry.savingsUsd;
    if (usd === undefined && entry.model) {
      pricing ??= loadPricing({ pricingPath: options.pricingPath });
      const price = priceFor(pricing, entry.model);
      usd = price ? savingsCost(price, entry.tokensSaved) : undefined;
    }
    file.record({ time: time0, tokensSaved: entry.tokensSaved, savingsUsd: usd });
  }
  if (entries.length > 0 && !(await file.close(120))) {
    throw new SvcError('SVC_STORE_UNAVAILABLE', `savings could not be written to ${options.savingsPath}`, {
      cause: file.lastError,
    });
  }
  return (await file.view()).data.lifetime;
}

export interface RecordSavingsOptions extends Omit<RecordSavingsBatchOptions, 'entries'>, SavingsEntry {}

/**
 * Records one saving (see `recordSavingsBatch`).
 *
 * @example await recordSavings({ savingsPath: config.savingsPath, tokensSaved: 1200, model: 'gpt-4o' })
 */
export function recordSavings(options: RecordSavingsOptions): Promise<SavingsAmount> {
  const { tokensSaved, time, model, savingsUsd, ...rest } = options;
  return recordSavingsBatch({ ...rest, entries: [{ tokensSaved, time, model, savingsUsd }] });
}
