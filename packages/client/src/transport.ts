import {
  SvcAuthError,
  SvcClientError,
  SvcCompressError,
  SvcConnectionError,
  SvcNotFoundError,
} from './errors.js';
import type { ResolvedCallOptions } from './options.js';

/** One request to the service. */
export interface ServiceRequest {
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
}

/** A successful (2xx) answer, body parsed as JSON when it is JSON. */
export interface ServiceResponse {
  status: number;
  contentType: string;
  text: string;
  json: unknown;
}

const BACKOFF_BASE_MS = 250;
const BACKOFF_MAX_MS = 4_000;
const SERVER_MESSAGE_MAX = 500;

/**
 * The wait before retry number `attempt` (0-based): exponential backoff with
 * jitter in [50%, 100%] of the step, or the server's `Retry-After` when longer.
 */
export function backoffDelay(attempt: number, random: () => number, retryAfterMs?: number): number {
  const step = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** attempt);
  const jittered = Math.round(step * (0.5 + random() * 0.5));
  return retryAfterMs === undefined ? jittered : Math.max(jittered, retryAfterMs);
}

function parseRetryAfter(value: string | null): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** Replaces every occurrence of the key, so no error or log line can carry it. */
export function redact(text: string, apiKey: string | undefined): string {
  return apiKey ? text.split(apiKey).join('[redacted]') : text;
}

/** The service's own message from an error body in any of the usual shapes. */
function serverMessageOf(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: unknown; message?: unknown; detail?: unknown };
    const err = body.error;
    if (err && typeof err === 'object' && typeof (err as { message?: unknown }).message === 'string') {
      return (err as { message: string }).message;
    }
    if (typeof err === 'string') return err;
    if (typeof body.message === 'string') return body.message;
    if (typeof body.detail === 'string') return body.detail;
  } catch {
    // not JSON: use the text itself
  }
  return text.trim().slice(0, SERVER_MESSAGE_MAX);
}

function errorForStatus(
  status: number,
  where: string,
  serverMessage: string,
  attempts: number,
): SvcClientError {
  const fields = { status, serverMessage, attempts };
  const message = `svc ${where} answered ${status}${serverMessage ? `: ${serverMessage}` : ''}`;
  if (status === 401 || status === 403) return new SvcAuthError(message, fields);
  if (status === 404 && where.startsWith('GET /v1/retrieve/')) return new SvcNotFoundError(message, fields);
  const transient = status >= 500 || status === 429;
  return new SvcCompressError(message, { ...fields, transient });
}

function connectionError(where: string, baseUrl: string, err: unknown, attempts: number): SvcConnectionError {
  const cause = (err as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  const detail = typeof cause?.code === 'string' ? cause.code : String((err as Error)?.message ?? err);
  return new SvcConnectionError(`svc ${where} unreachable at ${baseUrl}: ${detail}`, {
    cause: err,
    attempts,
  });
}

/**
 * Sends one request with retries on transient failures. The call's `timeout`
 * bounds everything (attempts and backoff waits); a user's `signal` cancels
 * with its own reason. Non-2xx answers become typed errors.
 */
export async function sendRequest(req: ServiceRequest, opts: ResolvedCallOptions): Promise<ServiceResponse> {
  const where = `${req.method} ${req.path}`;
  const deadline = AbortSignal.timeout(opts.timeout);
  const signal = opts.signal ? AbortSignal.any([opts.signal, deadline]) : deadline;
  const headers: Record<string, string> = { accept: 'application/json', ...opts.headers, ...req.headers };
  if (req.body !== undefined) headers['content-type'] = 'application/json';
  if (opts.apiKey) headers.authorization = `Bearer ${opts.apiKey}`;
  // svc attributes requests to their client by user agent (`svc-client/...` is this library); a caller's own wins.
  if (!Object.keys(headers).some((name) => name.toLowerCase() === 'user-agent'))
    headers['user-agent'] = 'svc-client/JS';
  const body = req.body === undefined ? undefined : JSON.stringify(req.body);

  for (let attempt = 0; ; attempt++) {
    let error: SvcClientError;
    let retryAfter: number | undefined;
    try {
      const res = await opts.fetch(`${opts.baseUrl}${req.path}`, {
        method: req.method,
        headers,
        body,
        signal,
      });
      const text = await res.text();
      if (res.ok) {
        const contentType = res.headers.get('content-type') ?? '';
        let json: unknown;
        if (contentType.includes('json')) {
          try {
            json = JSON.parse(text);
          } catch (err) {
            throw new SvcCompressError(`svc ${where} answered ${res.status} with invalid JSON`, {
              status: res.status,
              transient: true,
              attempts: attempt + 1,
              cause: err,
            });
          }
        }
        return { status: res.status, contentType, text, json };
      }
      error = errorForStatus(res.status, where, redact(serverMessageOf(text), opts.apiKey), attempt + 1);
      retryAfter = parseRetryAfter(res.headers.get('retry-after'));
    } catch (err) {
      if (err instanceof SvcClientError) throw err;
      if (opts.signal?.aborted) throw opts.signal.reason;
      if (deadline.aborted) {
        throw new SvcConnectionError(`svc ${where} timed out after ${opts.timeout} ms`, {
          cause: err,
          timedOut: true,
          attempts: attempt + 1,
        });
      }
      error = connectionError(where, opts.baseUrl, err, attempt + 1);
    }
    // Retry only what a retry can fix (connection errors, 5xx, 429), within the deadline.
    if (!error.transient || attempt >= opts.retries) throw error;
    try {
      await opts.sleep(backoffDelay(attempt, opts.random, retryAfter), signal);
    } catch {
      if (opts.signal?.aborted) throw opts.signal.reason;
      throw error;
    }
  }
}
