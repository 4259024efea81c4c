/**
 * Errors of the client. One base class, `SvcClientError`, with a literal
 * `code`; subclasses exist where a caller acts differently:
 *
 * | class               | code                    | when                                                    | transient |
 * |---------------------|-------------------------|---------------------------------------------------------|-----------|
 * | `SvcConnectionError`| `SVC_CLIENT_CONNECTION` | service unreachable, connection reset, timeout          | yes       |
 * | `SvcCompressError`  | `SVC_CLIENT_COMPRESS`   | 5xx or 429 (after retries), unreadable 2xx body          | yes       |
 * | `SvcCompressError`  | `SVC_CLIENT_COMPRESS`   | 400 and every other 4xx                                  | no        |
 * | `SvcAuthError`      | `SVC_CLIENT_AUTH`       | 401 or 403                                               | no        |
 * | `SvcNotFoundError`  | `SVC_CLIENT_NOT_FOUND`  | `retrieve` of an unknown or expired hash (404)           | no        |
 * | `SvcClientError`    | `SVC_CLIENT_BAD_OPTION` | an option or argument is invalid (thrown at once)        | no        |
 * | `SvcClientError`    | `SVC_CLIENT_SPLICE`     | an adapter could not map the result back (fallback only) | yes       |
 *
 * Transient errors are retried (where a retry can help) and are the ones
 * `fallback: true` turns into a `compressed: false` result; the others always
 * throw. No error ever holds the API key: messages from the server are
 * redacted, and no request options are kept on the error.
 */

/** The codes of `SvcClientError`. */
export type SvcClientErrorCode =
  | 'SVC_CLIENT_CONNECTION'
  | 'SVC_CLIENT_COMPRESS'
  | 'SVC_CLIENT_AUTH'
  | 'SVC_CLIENT_NOT_FOUND'
  | 'SVC_CLIENT_BAD_OPTION'
  | 'SVC_CLIENT_SPLICE';

/** Fields of a client error. */
export interface SvcClientErrorOptions {
  cause?: unknown;
  /** HTTP status of the service's answer, when there was one. */
  status?: number;
  /** The service's own error message, API key redacted. */
  serverMessage?: string;
  /** True when a retry or a fallback may apply. */
  transient?: boolean;
  /** How many HTTP attempts were made. */
  attempts?: number;
}

/** The base of every client error. */
export class SvcClientError extends Error {
  readonly code: SvcClientErrorCode;
  readonly status: number | undefined;
  readonly serverMessage: string | undefined;
  readonly transient: boolean;
  readonly attempts: number;

  constructor(code: SvcClientErrorCode, message: string, options: SvcClientErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'SvcClientError';
    this.code = code;
    this.status = options.status;
    this.serverMessage = options.serverMessage;
    this.transient = options.transient ?? false;
    this.attempts = options.attempts ?? 0;
  }
}

/** The service could not be reached in time (refused, reset, DNS, timeout). */
export class SvcConnectionError extends SvcClientError {
  /** True when the call's `timeout` ran out. */
  readonly timedOut: boolean;

  constructor(message: string, options: SvcClientErrorOptions & { timedOut?: boolean } = {}) {
    super('SVC_CLIENT_CONNECTION', message, { ...options, transient: true });
    this.name = 'SvcConnectionError';
    this.timedOut = options.timedOut ?? false;
  }
}

/** The service answered but did not compress: 400 and other 4xx (permanent), 5xx/429 (transient). */
export class SvcCompressError extends SvcClientError {
  constructor(message: string, options: SvcClientErrorOptions = {}) {
    super('SVC_CLIENT_COMPRESS', message, options);
    this.name = 'SvcCompressError';
  }
}

/** The service refused the API key (401/403). Never subject to fallback. */
export class SvcAuthError extends SvcClientError {
  constructor(message: string, options: SvcClientErrorOptions = {}) {
    super('SVC_CLIENT_AUTH', message, { ...options, transient: false });
    this.name = 'SvcAuthError';
  }
}

/** `retrieve` of a hash the CCR store does not hold (unknown or expired). */
export class SvcNotFoundError extends SvcClientError {
  constructor(message: string, options: SvcClientErrorOptions = {}) {
    super('SVC_CLIENT_NOT_FOUND', message, { ...options, transient: false });
    this.name = 'SvcNotFoundError';
  }
}

/** True for any client error (also across copies of this module). */
export function isSvcClientError(err: unknown): err is SvcClientError {
  return (
    err instanceof SvcClientError ||
    (err instanceof Error && String((err as { code?: unknown }).code).startsWith('SVC_CLIENT_'))
  );
}
