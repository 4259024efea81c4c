import { buildHistoryRecord, type HistoryRecord } from './history-record.js';
import { readSavingsData } from './savings-adapter.js';
import { emptySavings, type SavingsData } from './savings-data.js';

/** The history record read straight from the savings file (no server), and what the file was like. */
export interface LoadedHistory {
  record: HistoryRecord;
  /** The content the record was built from (for `--by`). */
  data?: SavingsData;
  state: 'ok' | 'missing' | 'malformed';
  /** Why a malformed file could not be read. */
  reason?: string;
}

/**
 * Reads the savings file without changing it (a malformed file is reported,
 * not moved: only a writer holding the lock moves files) and builds the same
 * record `GET /stats-history` serves.
 */
export async function loadHistory(savingsPath: string, now: number): Promise<LoadedHistory> {
  const found = await readSavingsData(savingsPath, now);
  if (found.state === 'ok')
    return { record: buildHistoryRecord(found.data, now), data: found.data, state: 'ok' };
  const record = buildHistoryRecord(emptySavings(now), now);
  return found.state === 'malformed'
    ? { record, state: 'malformed', reason: found.reason }
    : { record, state: 'missing' };
}
