import { badBody, intField, isObject } from './body.js';
import { chatFormat } from './chat/index.js';
import { messagesFormat } from './messages/index.js';
import { responsesFormat } from './responses/index.js';
import type { FormatName, ParsedRequest, ProviderFormat } from './types.js';

export { applyJsonEdits, JsonEdits, type JsonPath } from '../json/spans.js';
export { messagesList, spliceRequest, UnspliceableError } from './splice.js';
export { createSseTap, sseEvents } from './sse.js';
export type {
  AssistantTurn,
  ChatOrigin,
  FormatName,
  OwnToolCall,
  OwnToolCalls,
  ParsedRequest,
  ProviderFormat,
  ResponseToolCall,
  SseEvent,
  SseEventKind,
  SseUsageReader,
  StreamRelay,
  ToolAnswer,
  ToolSpec,
} from './types.js';
export { chatFormat, messagesFormat };

/**
 * Every provider format, by name. A new name in `FormatName` does not
 * compile until its format is registered here (and, through
 * `ProviderFormat`, complete); this is the one registration line per provider.
 */
export const FORMATS: Readonly<Record<FormatName, ProviderFormat>> = {
  messages: messagesFormat,
  chat: chatFormat,
  responses: responsesFormat,
};

/**
 * The format of svc's own endpoints' errors (`/v1/compress`, `/v1/retrieve`,
 * 404s) and of `/v1` requests no format claims: the OpenAI shape, which most
 * clients read.
 */
export const DEFAULT_FORMAT: ProviderFormat = chatFormat;

/** The format whose upstream takes a `/v1` request svc does not parse (`DEFAULT_FORMAT` when none claims it). */
export function formatForPassthrough(
  path: string,
  headers: Readonly<Record<string, string | string[] | undefined>>,
): ProviderFormat {
  return Object.values(FORMATS).find((f) => f.claimsPassthrough?.(path, headers)) ?? DEFAULT_FORMAT;
}

/** The format served at `path` (`/v1/messages`, `/v1/chat/completions`), if any. */
export function formatForPath(path: string): ProviderFormat | undefined {
  const clean = path.replace(/\/+$/, '');
  return Object.values(FORMATS).find((f) => f.path === clean);
}

/**
 * The read of each parsed body object. Parsed bodies are never modified, nor
 * are their reads: the proxy's body parser gives the same object for the
 * same body sent again, which then reads as the very same chat messages (the
 * system prompt's included), and every memo after it hits by identity.
 */
const parsedBodies = new WeakMap<object, ParsedRequest>();

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
  const known = parsedBodies.get(body);
  if (known?.format === format.name) return known;
  const { messages, origins } = format.toChat(body);
  const parsed: ParsedRequest = {
    format: format.name,
    model: typeof body.model === 'string' ? body.model : undefined,
    stream: body.stream === true,
    maxTokens: format.maxTokens
      ? format.maxTokens(body)
      : (intField(body.max_completion_tokens) ?? intField(body.max_tokens)),
    messages,
    origins,
    body,
  };
  parsedBodies.set(body, parsed);
  return parsed;
}

/** Where a body shows it is in one format (`ProviderFormat.signal`). */
export interface FormatSignal {
  format: ProviderFormat;
  where: string;
}

/**
 * The signals every format finds in a body, `DEFAULT_FORMAT`'s first. One
 * signal names the body's format; none: plain text, read as the default;
 * several: the body mixes formats.
 */
export function formatSignals(
  messages: readonly unknown[],
  body: Record<string, unknown> | undefined,
  prefix: string,
): FormatSignal[] {
  const order = [DEFAULT_FORMAT, ...Object.values(FORMATS).filter((f) => f !== DEFAULT_FORMAT)];
  return order.flatMap((format) => {
    const where = format.signal(messages, body, prefix);
    return where === undefined ? [] : [{ format, where }];
  });
}
