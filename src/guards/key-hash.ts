import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/** Bucket name used for requests that carry no key at all. */
export const ANONYMOUS_KEY = 'anonymous';

/**
 * A stable, non-reversible name for an API key: the first 16 hex digits of
 * SHA-256 over the key. Rate-limit buckets, cache partitions, logs and
 * metrics only ever see this, never the key itself.
 */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16);
}

/**
 * The raw credential a request carries: `x-api-key`, else the token of
 * `Authorization: Bearer ...` (or the whole header for other schemes).
 */
export function requestApiKey(headers: IncomingHttpHeaders): string | undefined {
  const xKey = headers['x-api-key'];
  const direct = Array.isArray(xKey) ? xKey[0] : xKey;
  if (direct && direct.trim() !== '') return direct.trim();
  const auth = headers.authorization?.trim();
  if (!auth) return undefined;
  const bearer = /^bearer\s+(.+)$/i.exec(auth);
  return bearer ? bearer[1]!.trim() : auth;
}

/**
 * The key hash of a request (see `hashApiKey`), or `ANONYMOUS_KEY` when it
 * carries no credential.
 *
 * @example requestKeyHash(req.headers) // 'a1b2c3d4e5f60718'
 */
export function requestKeyHash(headers: IncomingHttpHeaders): string {
  const key = requestApiKey(headers);
  return key === undefined ? ANONYMOUS_KEY : hashApiKey(key);
}
