import { isContentHash } from '../engine/hash.js';
import { SvcError } from '../errors.js';
import { matchQuery, type QueryResult } from './query.js';
import type { CcrStore } from './store.js';

/** A redeemed marker: the whole original, or what matched a query. */
export interface Retrieval {
  hash: string;
  /** The original bytes (no query) or the matching items/lines (with a query). */
  content: string;
  /** Present with a query: what matched and how. */
  match?: Omit<QueryResult, 'content'>;
}

/**
 * Looks a hash up in the CCR store; with a non-blank query keeps only the
 * matching items or lines. Throws SVC_BAD_REQUEST for a malformed hash and
 * SVC_NOT_FOUND (404) for an unknown or expired one.
 */
export async function retrieve(
  store: CcrStore,
  hash: string,
  query?: string,
  ttlSeconds?: number,
): Promise<Retrieval> {
  if (!isContentHash(hash)) {
    throw new SvcError(
      'SVC_BAD_REQUEST',
      `"${hash.slice(0, 40)}" is not a CCR hash (24 lowercase hex digits)`,
    );
  }
  const original = await store.get(hash);
  if (original === undefined) {
    const ttl = ttlSeconds === undefined ? '' : ` (entries are kept ${ttlSeconds} s)`;
    throw new SvcError('SVC_NOT_FOUND', `no CCR entry for hash ${hash}: unknown or expired${ttl}`, {
      details: { hash },
    });
  }
  if (query === undefined || query.trim() === '') return { hash, content: original };
  const { content, ...match } = matchQuery(original, query);
  return { hash, content, match };
}
