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
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}
