import type { ChatMessage } from '../../engine/types.js';
import { SvcError } from '../../errors.js';

/** A validated `POST /v1/compress` body. */
export interface CompressRequest {
  messages: ChatMessage[];
  model: string;
}

function bad(field: string, message: string): never {
  throw new SvcError('SVC_BAD_REQUEST', `${field} ${message}`, { details: { field } });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function checkContent(value: unknown, field: string, optional: boolean): void {
  if (value === undefined) {
    if (!optional) bad(field, 'is required (a string, an array of parts, or null)');
    return;
  }
  if (value === null || typeof value === 'string') return;
  if (!Array.isArray(value)) bad(field, 'must be a string, an array of parts, or null');
  value.forEach((part: unknown, i) => {
    const at = `${field}[${i}]`;
    if (!isObject(part)) bad(at, 'must be an object');
    if (typeof part.type !== 'string') bad(`${at}.type`, 'must be a string');
    if (part.type === 'text' && typeof part.text !== 'string') bad(`${at}.text`, 'must be a string');
  });
}

function checkToolCalls(value: unknown, field: string): void {
  if (value === undefined) return;
  if (!Array.isArray(value)) bad(field, 'must be an array');
  value.forEach((call: unknown, i) => {
    const at = `${field}[${i}]`;
    if (!isObject(call)) bad(at, 'must be an object');
    if (typeof call.id !== 'string') bad(`${at}.id`, 'must be a string');
    if (!isObject(call.function)) bad(`${at}.function`, 'must be an object');
    if (typeof call.function.name !== 'string') bad(`${at}.function.name`, 'must be a string');
    if (typeof call.function.arguments !== 'string') bad(`${at}.function.arguments`, 'must be a string');
  });
}

/**
 * Validates a `/v1/compress` body: `{messages: ChatMessage[], model: string}`.
 * Throws SVC_BAD_REQUEST (400) naming the first missing or ill-typed field,
 * e.g. `messages[2].role must be a string`.
 */
export function parseCompressRequest(body: unknown): CompressRequest {
  if (!isObject(body)) bad('body', 'must be a JSON object {messages, model}');
  const { messages, model } = body;
  if (messages === undefined) bad('messages', 'is required');
  if (!Array.isArray(messages)) bad('messages', 'must be an array of chat messages');
  messages.forEach((msg: unknown, i) => {
    const at = `messages[${i}]`;
    if (!isObject(msg)) bad(at, 'must be an object');
    if (typeof msg.role !== 'string' || msg.role === '') bad(`${at}.role`, 'must be a non-empty string');
    checkToolCalls(msg.tool_calls, `${at}.tool_calls`);
    checkContent(msg.content, `${at}.content`, msg.role === 'assistant' && msg.tool_calls !== undefined);
    if (msg.tool_call_id !== undefined && typeof msg.tool_call_id !== 'string') {
      bad(`${at}.tool_call_id`, 'must be a string');
    }
  });
  if (model === undefined) bad('model', 'is required');
  if (typeof model !== 'string' || model.trim() === '') bad('model', 'must be a non-empty string');
  return { messages: messages as ChatMessage[], model };
}
