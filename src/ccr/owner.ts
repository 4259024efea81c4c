import { contentHash } from '../engine/hash.js';
import type { CcrStore } from './store.js';

/*
 * Who may read a CCR entry (issue 15, item 5). With API keys configured, an
 * entry is readable through `/v1/retrieve` only by the client whose
 * credentials created it (and always by the server's own retrieval loop).
 * Ownership is kept as small records in the same store, one per (owner,
 * entry), under a hash of both: every store (memory, file, Redis) then
 * keeps it with the same lifetime as the entry, shared by all replicas,
 * without a change of format.
 */

/** The hash under which `owner` (a key hash) is recorded as an owner of entry `hash`. */
export function ownerRecordHash(owner: string, hash: string): string {
  return contentHash(`svc-ccr-owner\u0000${owner}\u0000${hash}`);
}

/** `entries` with an ownership record of `owner` for each. */
export function withOwnerRecords(entries: ReadonlyMap<string, string>, owner: string): Map<string, string> {
  const out = new Map(entries);
  for (const hash of entries.keys()) out.set(ownerRecordHash(owner, hash), '1');
  return out;
}

/** True when `owner` stored entry `hash` (and its record has not expired). */
export async function isOwnedBy(store: CcrStore, owner: string | undefined, hash: string): Promise<boolean> {
  if (owner === undefined) return false;
  return (await store.get(ownerRecordHash(owner, hash))) !== undefined;
}
