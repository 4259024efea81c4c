import { badBody, intField, isObject } from './body.js';
import { chatFormat } from './chat/request.js';
import { messagesFormat } from './messages/request.js';
import type { ParsedRequest, ProviderFormat } from './types.js';

export { applyJsonEdits, JsonEdits, type JsonPath } from '../json/spans.js';
export { spliceRequest, UnspliceableError } from './splice.js';
export { createSseTap } from './sse.js';
export type {
  ChatOrigin,
  FormatName,
  ParsedRequest,
  ProviderFormat,
  ResponseToolCall,
  SseUsageReader,
  ToolSpec,
} from './types.js';
export { chatFormat, messagesFormat };

/** Every provider format, by name. */
export const FORMATS = { messages: messagesFormat, chat: chatFormat } as const;

/** The format served at `path` (`/v1/messages`, `/v1/chat/completions`), if any. */
export function formatForPath(path: string): ProviderFormat | undefined {
  const clean = path.replace(/\/+$/, '');
  return Object.values(FORMATS).find((f) => f.path === clean);
}

/**
 * Reads a provider request body into the engine's model. Throws SvcError
 * (SVC_BAD_INPUT) naming the field when the body is not that format.
 *
 * @example
 * const parsed = parseRequest(messagesFormat, JSON.parse(text));
 * const output = compressMessages(parsed.messages, { model: parsed.model ?? 'claude' });
 * const spliced = spliceRequest(messagesFormat, text, parsed, output) ?? text;
 */
export function parseRequest(format: ProviderFormat, body: unknown): ParsedRequest {
  if (!isObject(body)) badBody('body', 'must be a JSON object');
  const { messages, origins } = format.toChat(body);
  return {
    format: format.name,
    model: typeof body.model === 'string' ? body.model : undefined,
    stream: body.stream === true,
    maxTokens: intField(body.max_completion_tokens) ?? intField(body.max_tokens),
    messages,
    origins,
    body,
  };
}
