/**
 * One error class for the whole project, with a literal `code`. Codes are
 * documented in the README's error table.
 */
export type SvcErrorCode =
  | 'SVC_BAD_REQUEST'
  | 'SVC_BAD_INPUT'
  | 'SVC_BAD_CONFIG'
  | 'SVC_UNAUTHORIZED'
  | 'SVC_PAYLOAD_TOO_LARGE'
  | 'SVC_NOT_FOUND'
  | 'SVC_COMPRESSION_FAILED'
  | 'SVC_ENGINE_TIMEOUT'
  | 'SVC_UPSTREAM_UNREACHABLE'
  | 'SVC_UPSTREAM_TIMEOUT'
  | 'SVC_RATE_LIMITED'
  | 'SVC_BUDGET_EXCEEDED'
  | 'SVC_MODEL_UNPRICED'
  | 'SVC_STORE_UNAVAILABLE'
  | 'SVC_INTERNAL';

export interface SvcErrorOptions {
  cause?: unknown;
  /** HTTP status to answer with, where the error reaches a client. */
  status?: number;
  /** Extra, safe-to-show fields (never secrets). */
  details?: Record<string, unknown>;
}

const DEFAULT_STATUS: Record<SvcErrorCode, number> = {
  SVC_BAD_REQUEST: 400,
  SVC_BAD_INPUT: 400,
  SVC_BAD_CONFIG: 500,
  SVC_UNAUTHORIZED: 401,
  SVC_PAYLOAD_TOO_LARGE: 413,
  SVC_NOT_FOUND: 404,
  SVC_COMPRESSION_FAILED: 503,
  SVC_ENGINE_TIMEOUT: 503,
  SVC_UPSTREAM_UNREACHABLE: 502,
  SVC_UPSTREAM_TIMEOUT: 504,
  SVC_RATE_LIMITED: 429,
  SVC_BUDGET_EXCEEDED: 402,
  SVC_MODEL_UNPRICED: 402,
  SVC_STORE_UNAVAILABLE: 503,
  SVC_INTERNAL: 500,
};

/** The base error: `new SvcError('SVC_BAD_REQUEST', 'messages must be an array')`. */
export class SvcError extends Error {
  readonly code: SvcErrorCode;
  readonly status: number;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: SvcErrorCode, message: string, options: SvcErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'SvcError';
    this.code = code;
    this.status = options.status ?? DEFAULT_STATUS[code];
    this.details = options.details;
  }
}

/** True for an SvcError (also across module copies). */
export function isSvcError(err: unknown): err is SvcError {
  return err instanceof Error && typeof (err as SvcError).code === 'string' && err.name === 'SvcError';
}
