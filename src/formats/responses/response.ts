import type { ReportedUsage } from '../../events.js';
import { intField, isObject, parseToolArguments } from '../body.js';
import type { OwnToolCalls, ResponseToolCall, ToolAnswer } from '../types.js';

type Json = Record<string, unknown>;

/**
 * Usage of a Responses answer: `input_tokens` (including
 * `input_tokens_details.cached_tokens`), `output_tokens` (including reasoning).
 */
export function usageOf(raw: unknown): ReportedUsage | undefined {
  if (!isObject(raw)) return undefined;
  const input = intField(raw.input_tokens);
  const output = intField(raw.output_tokens);
  if (input === undefined && output === undefined) return undefined;
  const details = isObject(raw.input_tokens_details) ? raw.input_tokens_details : {};
  const cached = Math.min(intField(details.cached_tokens) ?? 0, input ?? 0);
  // input_tokens includes cached tokens; `input` is what is billed at the base rate.
  return { input: (input ?? 0) - cached, output: output ?? 0, cacheRead: cached, cacheWrite: 0 };
}

/** Usage of a complete response object. */
export function usageFromJson(body: unknown): ReportedUsage | undefined {
  return isObject(body) ? usageOf(body.usage) : undefined;
}

/** The output items of a response object. */
export function outputItems(body: unknown): Json[] {
  return isObject(body) && Array.isArray(body.output) ? body.output.filter(isObject) : [];
}

/** True for a call item: `function_call` (arguments: JSON text) or `custom_tool_call` (free-form input). */
export function isCall(item: Json): boolean {
  return item.type === 'function_call' || item.type === 'custom_tool_call';
}

function callInput(item: Json): unknown {
  if (item.type === 'custom_tool_call') return item.input;
  try {
    return JSON.parse(String(item.arguments ?? '{}'));
  } catch {
    return item.arguments; // the model wrote arguments that are not JSON
  }
}

export function toolCallsFromResponse(body: unknown): ResponseToolCall[] {
  return outputItems(body)
    .filter(isCall)
    .map((item) => ({
      id: String(item.call_id ?? ''),
      name: String(item.name ?? ''),
      input: callInput(item),
    }));
}

/** One output item per result, after the response's own output items. */
export function continuation(body: unknown, results: Array<{ id: string; content: string }>): unknown[] {
  return [
    ...outputItems(body),
    ...results.map((r) => ({ type: 'function_call_output', call_id: r.id, output: r.content })),
  ];
}

/** True for an item of the model's turn that goes back upstream with answers to `toolName`: all but other tools' calls. */
export function keptForContinuation(item: Json, toolName: string): boolean {
  return !isCall(item) || item.name === toolName;
}

export function ownToolCalls(json: Json, toolName: string): OwnToolCalls {
  const items = outputItems(json);
  const calls = items
    .filter((item) => item.type === 'function_call' && item.name === toolName)
    .map((item) => ({
      id: String(item.call_id ?? ''),
      input: parseToolArguments(String(item.arguments ?? '')),
    }));
  return { calls, assistant: items.filter((item) => keptForContinuation(item, toolName)) };
}

export function withoutOwnToolCalls(json: Json, toolName: string): Json {
  const output = outputItems(json).filter((item) => !(isCall(item) && item.name === toolName));
  return { ...json, output };
}

/** One `function_call_output` item per answer. */
export function toolResults(answers: readonly ToolAnswer[]): unknown[] {
  return answers.map((a) => ({ type: 'function_call_output', call_id: a.id, output: a.text }));
}
