import type { ChatMessage } from '../../engine/types.js';
import type { ReportedUsage } from '../../events.js';
import { badBody, intField, isObject } from '../body.js';
import type { JsonPath } from '../../json/spans.js';
import type { ChatOrigin, ProviderFormat, ResponseToolCall, SseUsageReader, ToolSpec } from '../types.js';

/**
 * The chat-completions format (`/v1/chat/completions`). Its messages are the
 * engine's model already: each message goes to the engine as the original
 * object (system, developer, user, assistant with tool_calls, tool), and
 * content parts other than text (image_url, input_audio, file, refusal) are
 * opaque to it.
 */

function toChat(body: Record<string, unknown>): { messages: ChatMessage[]; origins: ChatOrigin[] } {
  if (!Array.isArray(body.messages)) badBody('messages', 'must be an array');
  const messages: ChatMessage[] = [];
  const origins: ChatOrigin[] = [];
  body.messages.forEach((msg: unknown, i) => {
    if (!isObject(msg) || typeof msg.role !== 'string')
      badBody(`messages[${i}]`, 'must be an object with a role');
    const at: JsonPath = ['messages', i];
    const origin: ChatOrigin = { owns: [at], message: i };
    if (typeof msg.content === 'string') origin.text = [...at, 'content'];
    else if (Array.isArray(msg.content)) {
      msg.content.forEach((part: unknown, k) => {
        if (!isObject(part) || typeof part.type !== 'string')
          badBody(`messages[${i}].content[${k}]`, 'must be a content part');
      });
      origin.parts = msg.content.map((_: unknown, k: number) => [...at, 'content', k]);
    } else if (msg.content !== undefined && msg.content !== null) {
      badBody(`messages[${i}].content`, 'must be a string, an array of parts, or null');
    }
    messages.push(
      msg.content === undefined ? ({ ...msg, content: null } as ChatMessage) : (msg as ChatMessage),
    );
    origins.push(origin);
  });
  return { messages, origins };
}

function fromChat(message: ChatMessage): unknown {
  return message;
}

function usageOf(raw: unknown): ReportedUsage | undefined {
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
function usageFromJson(body: unknown): ReportedUsage | undefined {
  return isObject(body) ? usageOf(body.usage) : undefined;
}

/**
 * The usage chunk of a chat stream: the last chunk before `[DONE]` when the
 * client asked for `stream_options.include_usage` (svc never adds it: the
 * request is the client's). Without it the stream carries no usage.
 */
function createSseUsageReader(): SseUsageReader {
  let usage: ReportedUsage | undefined;
  return {
    onEvent(_event, data) {
      if (data === '[DONE]' || !data.includes('"usage"')) return;
      try {
        const chunk = JSON.parse(data) as unknown;
        usage = (isObject(chunk) ? usageOf(chunk.usage) : undefined) ?? usage;
      } catch {
        // Not JSON: not a usage chunk.
      }
    },
    usage: () => usage,
  };
}

function firstMessage(body: unknown): Record<string, unknown> | undefined {
  if (!isObject(body) || !Array.isArray(body.choices)) return undefined;
  const choice = body.choices[0];
  return isObject(choice) && isObject(choice.message) ? choice.message : undefined;
}

function toolCallsFromResponse(body: unknown): ResponseToolCall[] {
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

function continuation(body: unknown, results: Array<{ id: string; content: string }>): unknown[] {
  const assistant = firstMessage(body) ?? { role: 'assistant', content: null };
  return [assistant, ...results.map((r) => ({ role: 'tool', tool_call_id: r.id, content: r.content }))];
}

/** The chat-completions format (`POST /v1/chat/completions`). */
export const chatFormat: ProviderFormat = {
  name: 'chat',
  path: '/v1/chat/completions',
  messagesPath: ['messages'],
  toChat,
  fromChat,
  usageFromJson,
  createSseUsageReader,
  errorShape: 'chat',
  toolDefinition: (tool: ToolSpec) => ({
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.schema },
  }),
  toolCallsFromResponse,
  continuation,
};
