/**
 * The chat view of a messages-format (Anthropic) request. Only text-bearing
 * blocks are sent for compression: `text` blocks, the `system` text and the
 * text of `tool_result` blocks. `tool_use` blocks travel as `tool_calls` so
 * the service can pair tool outputs with their calls, but are never written
 * back. Everything else (images, documents, thinking and redacted_thinking
 * with their signatures, server tool blocks, cache_control, citations) stays
 * exactly where and as it is.
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

/** A content block, as loosely as the converter needs it. */
interface Block {
  type: string;
  text?: unknown;
  content?: unknown;
  id?: unknown;
  name?: unknown;
  input?: unknown;
  tool_use_id?: unknown;
  [extra: string]: unknown;
}

/** The fields of a messages-format request the converter reads. */
export interface AnthropicRequest {
  system?: string | Block[];
  messages: Array<{ role: string; content: string | Block[]; [extra: string]: unknown }>;
  [extra: string]: unknown;
}

const withText = (node: unknown, text: string) => ({ ...(node as object), text });
const withContent = (node: unknown, content: string) => ({ ...(node as object), content });
const replaceString = (_node: unknown, text: string) => text;

function isTextBlock(block: Block): block is Block & { text: string } {
  return block.type === 'text' && typeof block.text === 'string';
}

function textSlots(blocks: Block[], indices: number[], base: PathKey[]): TextSlot[] {
  const slots: TextSlot[] = [];
  for (const b of indices) {
    const block = blocks[b]!;
    if (isTextBlock(block)) slots.push({ text: block.text, path: [...base, b], write: withText });
  }
  return slots;
}

function toolResultView(block: Block, i: number, b: number): ViewMessage {
  const path: PathKey[] = ['messages', i, 'content', b];
  const slots: TextSlot[] = [];
  let asString = false;
  if (typeof block.content === 'string') {
    asString = true;
    slots.push({ text: block.content, path, write: withContent });
  } else if (Array.isArray(block.content)) {
    (block.content as Block[]).forEach((inner, q) => {
      if (isTextBlock(inner))
        slots.push({ text: inner.text, path: [...path, 'content', q], write: withText });
    });
  }
  const chat: ChatMessage = {
    role: 'tool',
    tool_call_id: String(block.tool_use_id),
    content: chatContentOf(slots, asString),
  };
  return { chat, slots, message: i, blocks: [b] };
}

function toolCallOf(block: Block): ChatToolCall {
  return {
    id: String(block.id),
    type: 'function',
    function: { name: String(block.name), arguments: JSON.stringify(block.input ?? {}) },
  };
}

function messageViews(message: AnthropicRequest['messages'][number], i: number): ViewMessage[] {
  const { role, content } = message;
  if (typeof content === 'string') {
    const slots = [{ text: content, path: ['messages', i], write: withContent }];
    return [{ chat: { role, content }, slots, message: i, blocks: 'all' }];
  }
  const base: PathKey[] = ['messages', i, 'content'];
  const all = content.map((_, b) => b);
  if (role === 'assistant') {
    const calls = content.filter((block) => block.type === 'tool_use').map(toolCallOf);
    const slots = textSlots(content, all, base);
    const chat: ChatMessage = { role, content: chatContentOf(slots, false) };
    if (calls.length > 0) chat.tool_calls = calls;
    return [{ chat, slots, message: i, blocks: 'all' }];
  }
  // A user turn: each tool_result becomes a tool message (chat order puts
  // them first, as the messages format does); the rest is one user message.
  const views: ViewMessage[] = [];
  const rest: number[] = [];
  content.forEach((block, b) => {
    if (block.type === 'tool_result') views.push(toolResultView(block, i, b));
    else rest.push(b);
  });
  if (rest.length > 0 || views.length === 0) {
    const slots = textSlots(content, rest, base);
    views.push({ chat: { role, content: chatContentOf(slots, false) }, slots, message: i, blocks: rest });
  }
  return views;
}

function systemView(system: AnthropicRequest['system']): ViewMessage[] {
  if (typeof system === 'string') {
    const slots = [{ text: system, path: ['system'], write: replaceString }];
    return [{ chat: { role: 'system', content: system }, slots, message: -1, blocks: 'all' }];
  }
  if (!Array.isArray(system)) return [];
  const slots = textSlots(
    system,
    system.map((_, b) => b),
    ['system'],
  );
  if (slots.length === 0) return [];
  return [
    { chat: { role: 'system', content: chatContentOf(slots, false) }, slots, message: -1, blocks: 'all' },
  ];
}

/** Builds the chat view of a messages-format request. */
export function anthropicView(request: AnthropicRequest): ChatView {
  return {
    messagesPath: ['messages'],
    messages: [...systemView(request.system), ...request.messages.flatMap(messageViews)],
    markerMessage: (marker) => ({
      role: marker.role === 'assistant' ? 'assistant' : 'user',
      content: [{ type: 'text', text: textsOf(marker.content).join('\n') }],
    }),
  };
}
