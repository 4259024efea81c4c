/**
 * The chat view of an AI SDK prompt (`LanguageModelV2Prompt`). Text parts,
 * system text and tool results are sent for compression; tool-call parts
 * travel as `tool_calls` (never written back); file, reasoning and
 * provider-executed parts, and every `providerOptions`, stay as they are.
 * A `json` tool output is sent as its JSON text; if the service changes it,
 * the part becomes a `text` output holding the compressed text (the same
 * characters a provider would have serialised, minus what was removed).
 */
import {
  type ChatView,
  chatContentOf,
  type PathKey,
  type TextSlot,
  textsOf,
  type ViewMessage,
} from './splice.js';
import type { ChatMessage, ChatToolCall } from './types.js';

/** A prompt part, as loosely as the converter needs it. */
interface Part {
  type: string;
  text?: unknown;
  toolCallId?: unknown;
  toolName?: unknown;
  input?: unknown;
  output?: { type: string; value: unknown };
  [extra: string]: unknown;
}

/** An AI SDK prompt message, as loosely as the converter needs it. */
export interface AiSdkMessage {
  role: string;
  content: string | Part[];
  [extra: string]: unknown;
}

const withText = (node: unknown, text: string) => ({ ...(node as object), text });
const withContent = (node: unknown, content: string) => ({ ...(node as object), content });

function textSlots(parts: Part[], base: PathKey[]): TextSlot[] {
  const slots: TextSlot[] = [];
  parts.forEach((part, k) => {
    if (part.type === 'text' && typeof part.text === 'string') {
      slots.push({ text: part.text, path: [...base, k], write: withText });
    }
  });
  return slots;
}

/** Writes a new text into a tool-result part's output, turning json outputs into text. */
function writeOutput(node: unknown, text: string): unknown {
  const part = node as Part & { output: { type: string } };
  const type =
    part.output.type === 'json'
      ? 'text'
      : part.output.type === 'error-json'
        ? 'error-text'
        : part.output.type;
  return { ...part, output: { ...part.output, type, value: text } };
}

function toolResultView(part: Part, i: number, k: number): ViewMessage {
  const path: PathKey[] = ['prompt', i, 'content', k];
  const output = part.output;
  const slots: TextSlot[] = [];
  let asString = true;
  if (output?.type === 'text' || output?.type === 'error-text') {
    slots.push({ text: String(output.value), path, write: writeOutput });
  } else if (output?.type === 'json' || output?.type === 'error-json') {
    slots.push({ text: JSON.stringify(output.value) ?? 'null', path, write: writeOutput });
  } else if (output?.type === 'content' && Array.isArray(output.value)) {
    asString = false;
    slots.push(...textSlots(output.value as Part[], [...path, 'output', 'value']));
  }
  const chat: ChatMessage = {
    role: 'tool',
    tool_call_id: String(part.toolCallId),
    content: chatContentOf(slots, asString),
  };
  return { chat, slots, message: i, blocks: [k] };
}

function toolCallOf(part: Part): ChatToolCall {
  return {
    id: String(part.toolCallId),
    type: 'function',
    function: { name: String(part.toolName), arguments: JSON.stringify(part.input ?? {}) },
  };
}

function messageViews(message: AiSdkMessage, i: number): ViewMessage[] {
  const { role, content } = message;
  if (typeof content === 'string') {
    const slots = [{ text: content, path: ['prompt', i], write: withContent }];
    return [{ chat: { role, content }, slots, message: role === 'system' ? -1 : i, blocks: 'all' }];
  }
  if (role === 'tool') {
    return content.flatMap((part, k) => (part.type === 'tool-result' ? [toolResultView(part, i, k)] : []));
  }
  const slots = textSlots(content, ['prompt', i, 'content']);
  const chat: ChatMessage = { role, content: chatContentOf(slots, false) };
  // Provider-executed calls are answered inside the same message; they are not chat tool calls.
  const calls = content.filter((p) => p.type === 'tool-call' && p.providerExecuted !== true).map(toolCallOf);
  if (calls.length > 0) chat.tool_calls = calls;
  return [{ chat, slots, message: i, blocks: 'all' }];
}

/** Builds the chat view of an AI SDK prompt held at `params.prompt`. */
export function aiSdkView(prompt: AiSdkMessage[]): ChatView {
  return {
    messagesPath: ['prompt'],
    messages: prompt.flatMap(messageViews),
    markerMessage: (marker) => ({
      role: marker.role === 'assistant' ? 'assistant' : 'user',
      content: [{ type: 'text', text: textsOf(marker.content).join('\n') }],
    }),
  };
}
