import { createHash } from 'node:crypto';

/**
 * Content hash used for CCR references and memo keys: the first 24 hex digits
 * (96 bits) of SHA-256. Deterministic, so the same content always gets the
 * same marker (principle 2).
 */
export function contentHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 24);
}

/** True when `value` looks like a hash made by `contentHash`. */
export function isContentHash(value: string): boolean {
  return /^[0-9a-f]{24}$/.test(value);
}
