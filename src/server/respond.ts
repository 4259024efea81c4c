import type { ServerResponse } from 'node:http';

/** Which provider's error shape to answer with. */
export type ErrorShape = 'messages' | 'chat';

/**
 * Sends an error in the provider's shape: messages format
 * `{type:"error", error:{type, message}}`, chat format
 * `{error:{message, type, code}}`. The one place errors become responses.
 */
export function sendError(
  res: ServerResponse,
  shape: ErrorShape,
  status: number,
  type: string,
  message: string,
  headers: Record<string, string> = {},
  extra: Record<string, unknown> = {},
): void {
  const body =
    shape === 'messages'
      ? { type: 'error', error: { type, message, ...extra } }
      : { error: { message, type, code: type, ...extra } };
  sendJson(res, status, body, headers);
}

/** Sends a JSON body with its length. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

const MESSAGES_ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  415: 'invalid_request_error',
  429: 'rate_limit_error',
};

const CHAT_ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'invalid_request_error',
  415: 'invalid_request_error',
  429: 'rate_limit_error',
};

/**
 * Sends an error of svc's own (not one relayed from upstream) in the
 * provider's shape, with the provider's error type for its status, the svc
 * code in the chat shape's `code` and in the `x-svc-error` header, and the
 * offending field as `param` when known.
 */
export function sendSvcError(
  res: ServerResponse,
  shape: ErrorShape,
  err: { code: string; status: number; message: string; details?: Record<string, unknown> | undefined },
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const table = shape === 'messages' ? MESSAGES_ERROR_TYPES : CHAT_ERROR_TYPES;
  const type = table[err.status] ?? (shape === 'messages' ? 'api_error' : 'server_error');
  const extra: Record<string, unknown> = {};
  if (shape === 'chat') {
    extra.code = err.code;
    extra.param = typeof err.details?.field === 'string' ? err.details.field : null;
  }
  const all: Record<string, string> = { 'x-svc-error': err.code, ...headers };
  if (err.status === 413) all.connection = 'close';
  sendError(res, shape, err.status, type, err.message, all, extra);
}
