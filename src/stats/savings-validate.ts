import { PERIODS } from './periods.js';
import {
  type AmountBy,
  type ByAmount,
  type Checkpoint,
  HISTORY_DIMENSIONS,
  type SavingsAmount,
  type SavingsData,
  SCHEMA_VERSION,
} from './savings-data.js';

/** Thrown for a savings file that is not a valid version-1 file. */
export class MalformedSavingsError extends Error {
  constructor(reason: string) {
    super(`malformed savings file: ${reason}`);
    this.name = 'MalformedSavingsError';
  }
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isCount = (v: unknown) => typeof v === 'number' && Number.isFinite(v) && v >= 0;
const isTime = (v: unknown) => typeof v === 'string' && !Number.isNaN(Date.parse(v));

function amount(v: unknown, where: string): SavingsAmount {
  if (!isObj(v)) throw new MalformedSavingsError(`${where} is not an object`);
  const out: Obj = {};
  for (const key of [
    'tokens_saved',
    'compression_savings_usd',
    'requests',
    'unpriced_tokens_saved',
    'cli_tokens_saved',
    'cli_runs',
  ]) {
    const value = v[key] ?? (key === 'tokens_saved' || key === 'compression_savings_usd' ? undefined : 0);
    if (!isCount(value)) throw new MalformedSavingsError(`${where}.${key} is not a number >= 0`);
    out[key] = value;
  }
  // signed: svc can cost more than it saves
  const aware = v.cache_aware_savings_usd ?? 0;
  if (typeof aware !== 'number' || !Number.isFinite(aware))
    throw new MalformedSavingsError(`${where}.cache_aware_savings_usd is not a number`);
  out.cache_aware_savings_usd = aware;
  if (v.by !== undefined) out.by = amountBy(v.by, `${where}.by`);
  return out as unknown as SavingsAmount;
}

function amountBy(v: unknown, where: string): AmountBy {
  if (!isObj(v)) throw new MalformedSavingsError(`${where} is not an object`);
  const out: AmountBy = {};
  for (const d of HISTORY_DIMENSIONS) {
    const values = v[d];
    if (values === undefined) continue;
    if (!isObj(values)) throw new MalformedSavingsError(`${where}.${d} is not an object`);
    const dim: Record<string, ByAmount> = {};
    for (const [value, amount] of Object.entries(values)) {
      if (!Array.isArray(amount) || amount.length !== 4 || !amount.every(isCount))
        throw new MalformedSavingsError(`${where}.${d}["${value}"] is not 4 numbers >= 0`);
      dim[value] = amount as ByAmount;
    }
    out[d] = dim;
  }
  return out;
}

function checkpoint(v: unknown, i: number): Checkpoint {
  const where = `history[${i}]`;
  if (!isObj(v) || !isTime(v.timestamp)) throw new MalformedSavingsError(`${where}.timestamp is not a time`);
  if (!isCount(v.total_tokens_saved) || !isCount(v.compression_savings_usd)) {
    throw new MalformedSavingsError(`${where} totals are not numbers >= 0`);
  }
  return {
    timestamp: v.timestamp as string,
    total_tokens_saved: v.total_tokens_saved as number,
    compression_savings_usd: v.compression_savings_usd as number,
  };
}

/**
 * Checks a parsed savings file and returns it typed. Optional parts that are
 * missing (history, rollups) start empty; anything present but wrong makes the
 * whole file malformed, so it is moved aside rather than half trusted.
 */
export function parseSavingsData(raw: unknown, now: number): SavingsData {
  if (!isObj(raw)) throw new MalformedSavingsError('top level is not an object');
  if (raw.schema_version !== SCHEMA_VERSION) {
    throw new MalformedSavingsError(`schema_version is ${JSON.stringify(raw.schema_version)}, expected 1`);
  }
  const lifetime = amount(raw.lifetime, 'lifetime');
  const history = raw.history ?? [];
  if (!Array.isArray(history)) throw new MalformedSavingsError('history is not an array');
  const rawRollups = raw.rollups ?? {};
  if (!isObj(rawRollups)) throw new MalformedSavingsError('rollups is not an object');
  const rollups = { hourly: {}, daily: {}, weekly: {}, monthly: {} } as SavingsData['rollups'];
  for (const period of PERIODS) {
    const buckets = rawRollups[period] ?? {};
    if (!isObj(buckets)) throw new MalformedSavingsError(`rollups.${period} is not an object`);
    for (const [key, value] of Object.entries(buckets)) {
      if (!isTime(key)) throw new MalformedSavingsError(`rollups.${period} key "${key}" is not a time`);
      rollups[period][new Date(key).toISOString()] = amount(value, `rollups.${period}["${key}"]`);
    }
  }
  const stamp = (v: unknown) =>
    isTime(v) ? new Date(v as string).toISOString() : new Date(now).toISOString();
  return {
    schema_version: SCHEMA_VERSION,
    created_at: stamp(raw.created_at),
    updated_at: stamp(raw.updated_at),
    lifetime,
    history: history.map(checkpoint),
    rollups,
  };
}
