/**
 * A token bucket as plain data: `level` tokens at time `at` (ms), refilling
 * continuously at `capacity` per `windowMs` up to `capacity`. The level may
 * go below zero: a request admitted on an estimate that turns out larger
 * (or a single request larger than the whole bucket) leaves a debt that
 * delays the next ones instead of being forgotten.
 */
export interface TokenBucket {
  level: number;
  at: number;
}

/** A full bucket at time `now`. */
export function fullBucket(capacity: number, now: number): TokenBucket {
  return { level: capacity, at: now };
}

/** Brings `bucket` forward to `now` (in place) and returns its level. */
export function refill(bucket: TokenBucket, capacity: number, windowMs: number, now: number): number {
  const elapsed = Math.max(0, now - bucket.at);
  bucket.level = Math.min(capacity, bucket.level + (elapsed * capacity) / windowMs);
  bucket.at = Math.max(bucket.at, now);
  return bucket.level;
}

/** Milliseconds until the bucket holds `wanted` tokens (0 when it already does). */
export function msUntil(bucket: TokenBucket, wanted: number, capacity: number, windowMs: number): number {
  const missing = wanted - bucket.level;
  return missing <= 0 ? 0 : Math.ceil((missing * windowMs) / capacity);
}
