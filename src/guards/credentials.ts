import type { IncomingHttpHeaders } from 'node:http';

/*
 * Every way a provider key can arrive (issue 15, item 3). The client's
 * identity for the response cache, the rate limit and the stats is the hash
 * of this material: before, only `Authorization: Bearer` and `x-api-key`
 * counted, so clients keyed by `api-key` (Azure), `Authorization: Basic` or
 * `x-goog-api-key` all shared the anonymous partition, cached answers
 * included.
 */

/** Headers that carry a bare key. */
const KEY_HEADERS = ['x-api-key', 'api-key', 'x-goog-api-key'] as const;

function headerValue(value: string | string[] | undefined): string | undefined {
  const v = Array.isArray(value) ? value.join(',') : value;
  const t = v?.trim();
  return t ? t : undefined;
}

/**
 * The credential material of a request: the key of `Authorization: Bearer`,
 * the whole `Authorization` value for any other scheme (Basic...), the keys of
 * `x-api-key`, `api-key`, `x-goog-api-key`, and the query parameter `key`.
 * One credential gives its value (so a Bearer or x-api-key key hashes as it
 * always did); several give their distinct values, sorted, one per line.
 * Undefined when the request carries none. Never log the return value.
 *
 * @example credentialOf({ 'api-key': 'k1' }, '?x=1') // 'k1'
 */
export function credentialOf(headers: IncomingHttpHeaders, search?: string | null): string | undefined {
  // one credential, the common case: itself (no set, no sort: this runs on every request)
  let one: string | undefined;
  let more: string[] | undefined;
  const add = (v: string) => {
    if (one === undefined) {
      one = v;
      return;
    }
    if (more === undefined) more = [one];
    more.push(v);
  };
  const auth = headerValue(headers.authorization);
  if (auth) {
    const bearer = /^Bearer\s+(.+)$/i.exec(auth);
    add(bearer ? bearer[1]!.trim() : auth);
  }
  for (const name of KEY_HEADERS) {
    const v = headerValue(headers[name]);
    if (v) add(v);
  }
  if (search && search.length > 1) {
    for (const v of new URLSearchParams(search).getAll('key')) if (v.trim()) add(v.trim());
  }
  if (!more) return one;
  return [...new Set(more)].sort().join('\n');
}
