// @ts-check
/** Reading svc's own endpoints. URLs are relative to the page, so a path prefix added by a proxy works. */

/** A failed call, worded for the person looking at the page. */
export class DashboardApiError extends Error {
  /**
   * @param {string} path
   * @param {number | undefined} status undefined when svc did not answer at all
   * @param {string} detail
   */
  constructor(path, status, detail) {
    super(
      status === undefined
        ? `${path}: svc did not answer (${detail})`
        : `${path} answered ${status}: ${detail}`,
    );
    this.name = 'DashboardApiError';
    this.path = path;
    this.status = status;
    this.detail = detail;
  }
}

/**
 * The message of an error body in either provider shape, or the start of the text.
 * @param {string} text
 */
function errorDetail(text) {
  try {
    const body = JSON.parse(text);
    const message = body?.error?.message;
    if (typeof message === 'string') return message;
  } catch {
    // not JSON: show the text itself
  }
  return text.trim().slice(0, 200) || 'no details';
}

/**
 * GETs `path` and returns the response text; throws DashboardApiError on a
 * network failure or a non-2xx status.
 * @param {string} path
 * @param {AbortSignal} [signal]
 */
export async function getText(path, signal) {
  let res;
  try {
    res = await fetch(path, {
      cache: 'no-store',
      signal,
      headers: { accept: 'application/json, text/plain' },
    });
  } catch (err) {
    if (signal?.aborted) throw err;
    throw new DashboardApiError(path, undefined, err instanceof Error ? err.message : String(err));
  }
  const text = await res.text();
  if (!res.ok) throw new DashboardApiError(path, res.status, errorDetail(text));
  return text;
}

/**
 * GETs `path` and parses its JSON body.
 * @param {string} path
 * @param {AbortSignal} [signal]
 * @returns {Promise<unknown>}
 */
export async function getJson(path, signal) {
  const text = await getText(path, signal);
  try {
    return JSON.parse(text);
  } catch {
    throw new DashboardApiError(path, 200, 'the body is not JSON');
  }
}
