import { silentLogger } from '../log.js';
import { connectSharedStore } from '../store/redis.js';
import type { LoadedHistory } from './history-load.js';
import { buildHistoryRecord } from './history-record.js';
import { RedisSavingsStore } from './redis-savings.js';

/**
 * `svc history --store URL`: the fleet's durable history, read from Redis
 * (the same record `GET /stats-history` serves on any replica). Throws
 * SVC_STORE_UNAVAILABLE when Redis cannot be reached.
 */
export async function loadFleetHistory(url: string, prefix: string, now: number): Promise<LoadedHistory> {
  const store = await connectSharedStore({ url, prefix, logger: silentLogger });
  try {
    const data = await new RedisSavingsStore(store, { now: () => now }).read();
    return { record: buildHistoryRecord(data, now), data, state: data.history.length > 0 ? 'ok' : 'missing' };
  } finally {
    await store.close();
  }
}
