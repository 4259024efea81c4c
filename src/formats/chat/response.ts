import type { ReportedUsage } from '../../events.js';
import { intField, isObject, parseToolArguments } from '../body.js';
import type { OwnToolCalls, ResponseToolCall, SvcErrorLike, ToolAnswer } from '../types.js';

type Json = Record<string, unknown>;
type ChatCall = { id?: unknown; function?: { name?: unknown; arguments?: unknown } };

export function usageOf(raw: unknown): ReportedUsage | undefined {
  if (!isObject(raw)) return undefined;
  const prompt = intField(raw.prompt_tokens);
  const completion = intField(raw.completion_tokens);
  if (prompt === undefined && completion === undefined) return undefined;
  const details = isObject(raw.prompt_tokens_details) ? raw.prompt_tokens_details : {};
  const cached = Math.min(intField(details.cached_tokens) ?? 0, prompt ?? 0);
  // prompt_tokens includes cached tokens; `input` is what is billed at the base rate.
  return { input: (prompt ?? 0) - cached, output: completion ?? 0, cacheRead: cached, cacheWrite: 0 };
}

/** Usage in the chat format: `prompt_tokens` (incl. `prompt_tokens_details.cached_tokens`), `completion_tokens`. */
export function usageFromJson(body: unknown): ReportedUsage | undefined {
  return isObject(body) ? usageOf(body.usage) : undefined;
}

function firstMessage(body: unknown): Record<string, unknown> | undefined {
  if (!isObject(body) || !Array.isArray(body.choices)) return undefined;
  const choice = body.choices[0];
  return isObject(choice) && isObject(choice.message) ? choice.message : undefined;
}

export function toolCallsFromResponse(body: unknown): ResponseToolCall[] {
  const calls = firstMessage(body)?.tool_calls;
  if (!Array.isArray(calls)) return [];
  return calls.filter(isObject).map((c) => {
    const fn = isObject(c.function) ? c.function : {};
    let input: unknown = fn.arguments;
    try {
      input = JSON.parse(String(fn.arguments ?? '{}'));
    } catch {
      // Keep the raw string: the model wrote arguments that are not JSON.
    }
    return { id: String(c.id ?? ''), name: String(fn.name ?? ''), input };
  });
}

export function continuation(body: unknown, results: Array<{ id: string; content: string }>): unknown[] {
  const assistant = firstMessage(body) ?? { role: 'assistant', content: null };
  return [assistant, ...results.map((r) => ({ role: 'tool', tool_call_id: r.id, content: r.content }))];
}

export function ownToolCalls(json: Json, toolName: string): OwnToolCalls {
  const message = firstMessage(json) ?? {};
  const toolCalls = Array.isArray(message.tool_calls) ? (message.tool_calls as ChatCall[]) : [];
  const ours = toolCalls.filter((c) => c.function?.name === toolName);
  const calls = ours.map((c) => ({
    id: String(c.id),
    input: parseToolArguments(String(c.function?.arguments ?? '')),
  }));
  return { calls, assistant: { role: 'assistant', content: message.content ?? null, tool_calls: ours } };
}

export function withoutOwnToolCalls(json: Json, toolName: string): Json {
  const choices = Array.isArray(json.choices) ? (json.choices as Json[]) : [];
  return {
    ...json,
    choices: choices.map((choice) => {
      const message = (choice.message ?? {}) as Json;
      const rest = (Array.isArray(message.tool_calls) ? (message.tool_calls as ChatCall[]) : []).filter(
        (c) => c.function?.name !== toolName,
      );
      const { tool_calls: _drop, ...others } = message;
      const next: Json = { ...others, content: message.content ?? '' };
      if (rest.length > 0) next.tool_calls = rest;
      const finish =
        choice.finish_reason === 'tool_calls' && rest.length === 0 ? 'stop' : choice.finish_reason;
      return { ...choice, message: next, finish_reason: finish };
    }),
  };
}

/** One `tool` message per answer. */
export function toolResults(answers: readonly ToolAnswer[]): unknown[] {
  return answers.map((a) => ({ role: 'tool', tool_call_id: a.id, content: a.text }));
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'invalid_request_error',
  415: 'invalid_request_error',
  429: 'rate_limit_error',
};

/** `{error:{message, type, code}}`. */
export function errorBody(type: string, message: string, extra: Record<string, unknown>): unknown {
  return { error: { message, type, code: type, ...extra } };
}

export const errorType = (status: number): string => ERROR_TYPES[status] ?? 'server_error';

/** The svc code as `code`, the offending field (when known) as `param`. */
export function svcErrorFields(err: SvcErrorLike): Record<string, unknown> {
  return { code: err.code, param: typeof err.details?.field === 'string' ? err.details.field : null };
}
