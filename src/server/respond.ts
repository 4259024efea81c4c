import type { ServerResponse } from 'node:http';
import type { ProviderFormat } from '../formats/index.js';

/**
 * Sends an error in `format`'s shape (`format.errorBody`). The one place
 * errors become responses.
 */
export function sendError(
  res: ServerResponse,
  format: ProviderFormat,
  status: number,
  type: string,
  message: string,
  headers: Record<string, string> = {},
  extra: Record<string, unknown> = {},
): void {
  sendJson(res, status, format.errorBody(type, message, extra), headers);
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

/**
 * Sends an error of svc's own (not one relayed from upstream) in the
 * provider's shape, with the provider's error type for its status, the svc
 * code in the `x-svc-error` header, and the fields the shape adds
 * (`format.svcErrorFields`: the chat shape's `code` and `param`).
 */
export function sendSvcError(
  res: ServerResponse,
  format: ProviderFormat,
  err: { code: string; status: number; message: string; details?: Record<string, unknown> | undefined },
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const type = format.errorType(err.status);
  const extra = format.svcErrorFields(err);
  const all: Record<string, string> = { 'x-svc-error': err.code, ...headers };
  if (err.status === 413) all.connection = 'close';
  sendError(res, format, err.status, type, err.message, all, extra);
}
