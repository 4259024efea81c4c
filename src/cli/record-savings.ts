import type { Config } from '../config/options.js';

/** The savings of one input compressed by `svc compress`. */
export interface CompressSavingsRecord {
  /** When it was compressed. */
  time: Date;
  /** The input's name (`convo.json`, `stdin`). */
  input: string;
  model: string;
  tokensBefore: number;
  tokensAfter: number;
  tokensSaved: number;
}

/**
 * Records the savings of a `svc compress` run in the durable savings file
 * (`config.savingsPath`), unless `--no-record` was given: one locked write per
 * run, merged with what other writers (a server, other runs) put there.
 * Called once per run, after the output was written; a failure is printed as
 * a warning and does not change the exit code.
 */
export async function recordCompressSavings(config: Config, records: CompressSavingsRecord[]): Promise<void> {
  if (!records.some((r) => r.tokensSaved > 0)) return;
  const { recordSavingsBatch } = await import('../stats/savings-file.js');
  await recordSavingsBatch({
    savingsPath: config.savingsPath,
    pricingPath: config.pricingPath,
    // Offline: nothing went to a provider, so its tokens are recorded under source `cli`, never as USD.
    entries: records.map((r) => ({ time: r.time, tokensSaved: r.tokensSaved, source: 'cli' as const })),
  });
}
