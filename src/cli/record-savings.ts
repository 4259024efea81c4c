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
 * Hook: records the savings of a `svc compress` run in the durable savings
 * file (`config.savingsPath`, issue 4), unless `--no-record` was given.
 * Called once per run, after the output was written; a failure is printed as
 * a warning and does not change the exit code.
 *
 * Not wired yet: the savings file module (src/stats/) replaces this body
 * with one call, e.g. `await appendCompressSavings(config.savingsPath, records)`.
 */
export async function recordCompressSavings(
  _config: Config,
  _records: CompressSavingsRecord[],
): Promise<void> {}
