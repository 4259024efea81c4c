import type { ReportedUsage } from '../../events.js';
import { intField, isObject } from '../body.js';
import type { OwnToolCalls, ResponseToolCall, SvcErrorLike, ToolAnswer } from '../types.js';
import type { Block } from './request.js';

/** Reads one `usage` object into `into` (fields present only). */
export function usageOf(raw: unknown, into: Partial<ReportedUsage>): void {
  if (!isObject(raw)) return;
  const input = intField(raw.input_tokens);
  const output = intField(raw.output_tokens);
  const read = intField(raw.cache_read_input_tokens);
  let write = intField(raw.cache_creation_input_tokens);
  // The split by TTL, when present: `cache_creation.ephemeral_5m_input_tokens` / `ephemeral_1h_input_tokens`.
  const split = isObject(raw.cache_creation) ? raw.cache_creation : undefined;
  const w5m = split ? intField(split.ephemeral_5m_input_tokens) : undefined;
  const w1h = split ? intField(split.ephemeral_1h_input_tokens) : undefined;
  if (write === undefined && (w5m !== undefined || w1h !== undefined)) write = (w5m ?? 0) + (w1h ?? 0);
  if (input !== undefined) into.input = input;
  if (output !== undefined) into.output = output;
  if (read !== undefined) into.cacheRead = read;
  if (write !== undefined) into.cacheWrite = write;
  if (w1h !== undefined) into.cacheWrite1h = Math.min(w1h, write ?? w1h);
}

/** Usage once input or output was seen; undefined before. */
export function complete(u: Partial<ReportedUsage>): ReportedUsage | undefined {
  if (u.input === undefined && u.output === undefined) return undefined;
  return {
    input: u.input ?? 0,
    output: u.output ?? 0,
    cacheRead: u.cacheRead ?? 0,
    cacheWrite: u.cacheWrite ?? 0,
    ...(u.cacheWrite1h ? { cacheWrite1h: u.cacheWrite1h } : {}),
  };
}

/**
 * Usage in the messages format: `input_tokens` (billed at the base rate,
 * excluding cache reads and writes), `output_tokens`,
 * `cache_read_input_tokens`, `cache_creation_input_tokens` (with its split
 * `cache_creation.ephemeral_5m_input_tokens` / `ephemeral_1h_input_tokens`).
 */
export function usageFromJson(body: unknown): ReportedUsage | undefined {
  if (!isObject(body)) return undefined;
  const u: Partial<ReportedUsage> = {};
  usageOf(body.usage, u);
  return complete(u);
}

export function toolCallsFromResponse(body: unknown): ResponseToolCall[] {
  if (!isObject(body) || !Array.isArray(body.content)) return [];
  return body.content
    .filter((b): b is Block => isObject(b) && b.type === 'tool_use')
    .map((b) => ({ id: String(b.id ?? ''), name: String(b.name ?? ''), input: b.input ?? {} }));
}

export function continuation(body: unknown, results: Array<{ id: string; content: string }>): unknown[] {
  const content = isObject(body) && Array.isArray(body.content) ? body.content : [];
  return [
    { role: 'assistant', content },
    {
      role: 'user',
      content: results.map((r) => ({ type: 'tool_result', tool_use_id: r.id, content: r.content })),
    },
  ];
}

type ToolBlock = { type?: unknown; name?: unknown; id?: unknown; input?: unknown };

export function ownToolCalls(json: Record<string, unknown>, toolName: string): OwnToolCalls {
  const isOurs = (b: ToolBlock) => b.type === 'tool_use' && b.name === toolName;
  const content = Array.isArray(json.content) ? (json.content as ToolBlock[]) : [];
  const calls = content
    .filter(isOurs)
    .map((b) => ({ id: String(b.id), input: (b.input ?? {}) as Record<string, unknown> }));
  const kept = content.filter((b) => b.type !== 'tool_use' || isOurs(b));
  return { calls, assistant: { role: 'assistant', content: kept } };
}

export function withoutOwnToolCalls(
  json: Record<string, unknown>,
  toolName: string,
): Record<string, unknown> {
  const isOurs = (b: ToolBlock) => b.type === 'tool_use' && b.name === toolName;
  const content = (Array.isArray(json.content) ? (json.content as ToolBlock[]) : []).filter(
    (b) => !isOurs(b),
  );
  const out: Record<string, unknown> = {
    ...json,
    content: content.length > 0 ? content : [{ type: 'text', text: '' }],
  };
  if (json.stop_reason === 'tool_use' && !content.some((b) => b.type === 'tool_use'))
    out.stop_reason = 'end_turn';
  return out;
}

/** One user message of `tool_result` blocks (an error answer is marked `is_error`). */
export function toolResults(answers: readonly ToolAnswer[]): unknown[] {
  const content = answers.map((a) => ({
    type: 'tool_result',
    tool_use_id: a.id,
    content: a.text,
    ...(a.error ? { is_error: true } : {}),
  }));
  return [{ role: 'user', content }];
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  415: 'invalid_request_error',
  429: 'rate_limit_error',
};

/** `{type:"error", error:{type, message}}`. */
export function errorBody(type: string, message: string, extra: Record<string, unknown>): unknown {
  return { type: 'error', error: { type, message, ...extra } };
}

export const errorType = (status: number): string => ERROR_TYPES[status] ?? 'api_error';

export const svcErrorFields = (_err: SvcErrorLike): Record<string, unknown> => ({});
