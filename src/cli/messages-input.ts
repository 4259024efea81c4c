import type { ChatMessage, ContentPart, ToolCall } from '../engine/types.js';
import { SvcError } from '../errors.js';

/**
 * A minimal adapter between the messages format (content blocks) and the
 * engine's chat model, for `svc compress`. `src/formats/` holds the proxy's
 * full converter; this one may be swapped for it.
 *
 * To chat: a top-level `system` becomes a system message; `tool_result`
 * blocks become `tool` messages; `tool_use` blocks become `tool_calls`; text
 * and every other block (images, thinking, documents) become content parts,
 * passed through as they are. Back: unchanged messages are returned as the
 * very same objects; in changed ones only the text is spliced into the
 * original blocks.
 */

/** A content block of the messages format. */
export interface MessagesBlock {
  type: string;
  [extra: string]: unknown;
}

/** A message of the messages format. */
export interface MessagesFormatMessage {
  role: 'user' | 'assistant';
  content: string | MessagesBlock[];
  [extra: string]: unknown;
}

/** Where a chat message came from in the original messages. */
type Source =
  | { kind: 'system' }
  | { kind: 'whole'; index: number }
  | { kind: 'blocks'; index: number; blocks: number[]; tools: number[] }
  | { kind: 'tool_result'; index: number; block: number };

/** The chat view of messages-format messages, and how to map it back. */
export interface MessagesConversion {
  chat: ChatMessage[];
  sources: Source[];
  original: MessagesFormatMessage[];
}

/** What the engine returned, as much as splicing back needs. */
export interface ChatOutput {
  messages: ChatMessage[];
  messageOrigin: number[];
  changed: Set<number>;
}

/** Converts messages-format messages (and the top-level `system`) to chat messages. */
export function messagesFormatToChat(
  original: MessagesFormatMessage[],
  system?: unknown,
): MessagesConversion {
  const chat: ChatMessage[] = [];
  const sources: Source[] = [];
  if (typeof system === 'string' || Array.isArray(system)) {
    chat.push({ role: 'system', content: system as string | ContentPart[] });
    sources.push({ kind: 'system' });
  }
  original.forEach((msg, index) => {
    if (typeof msg.content === 'string') {
      chat.push({ role: msg.role, content: msg.content });
      sources.push({ kind: 'whole', index });
      return;
    }
    const blocks: number[] = [];
    const tools: number[] = [];
    const toolCalls: ToolCall[] = [];
    msg.content.forEach((block, j) => {
      if (block.type === 'tool_result') {
        const content = block.content as string | ContentPart[] | undefined;
        chat.push({ role: 'tool', tool_call_id: String(block.tool_use_id), content: content ?? '' });
        sources.push({ kind: 'tool_result', index, block: j });
      } else if (block.type === 'tool_use') {
        tools.push(j);
        const args = JSON.stringify(block.input ?? {});
        toolCalls.push({
          id: String(block.id),
          type: 'function',
          function: { name: String(block.name), arguments: args },
        });
      } else blocks.push(j);
    });
    if (blocks.length === 0 && tools.length === 0) return;
    const content = blocks.length > 0 ? blocks.map((j) => msg.content[j] as ContentPart) : null;
    chat.push(
      toolCalls.length > 0 ? { role: msg.role, content, tool_calls: toolCalls } : { role: msg.role, content },
    );
    sources.push({ kind: 'blocks', index, blocks, tools });
  });
  return { chat, sources, original };
}

/** Puts changed content back into the original blocks: only text changes, other blocks stay. */
function spliceParts(originals: MessagesBlock[], content: ChatMessage['content']): MessagesBlock[] {
  if (Array.isArray(content)) return content as MessagesBlock[];
  const text = content ?? '';
  const out: MessagesBlock[] = [];
  let placed = false;
  for (const block of originals) {
    if (block.type !== 'text') out.push(block);
    else if (!placed) {
      out.push({ ...block, text });
      placed = true;
    }
  }
  if (!placed && text !== '') out.unshift({ type: 'text', text });
  return out;
}

function asMessagesContent(content: ChatMessage['content']): string | MessagesBlock[] {
  return Array.isArray(content) ? (content as MessagesBlock[]) : (content ?? '');
}

function insertedMessage(msg: ChatMessage): MessagesFormatMessage {
  return { role: msg.role === 'assistant' ? 'assistant' : 'user', content: asMessagesContent(msg.content) };
}

/** Maps the engine's chat output back to messages-format messages (the system message is left out). */
export function chatToMessagesFormat(conv: MessagesConversion, output: ChatOutput): MessagesFormatMessage[] {
  if (output.messageOrigin.length !== output.messages.length) {
    throw new SvcError('SVC_COMPRESSION_FAILED', 'engine output: messageOrigin does not match its messages');
  }
  type Slots = (MessagesBlock[] | undefined)[];
  const out: Array<{ message: MessagesFormatMessage } | { index: number; slots: Slots }> = [];
  const slotsByIndex = new Map<number, Slots>();
  output.messages.forEach((msg, k) => {
    const origin = output.messageOrigin[k]!;
    if (origin < 0) {
      out.push({ message: insertedMessage(msg) });
      return;
    }
    const source = conv.sources[origin];
    if (!source || source.kind === 'system') return;
    const original = conv.original[source.index]!;
    const changed = output.changed.has(origin) || msg.content !== conv.chat[origin]!.content;
    if (source.kind === 'whole') {
      out.push({ message: changed ? { ...original, content: asMessagesContent(msg.content) } : original });
      return;
    }
    const blocks = original.content as MessagesBlock[];
    let slots = slotsByIndex.get(source.index);
    if (!slots) {
      slots = new Array<MessagesBlock[] | undefined>(blocks.length).fill(undefined);
      slotsByIndex.set(source.index, slots);
      out.push({ index: source.index, slots });
    }
    if (source.kind === 'tool_result') {
      const block = blocks[source.block]!;
      slots[source.block] = [changed ? { ...block, content: msg.content ?? '' } : block];
      return;
    }
    for (const j of source.tools) slots[j] = [blocks[j]!];
    for (const j of source.blocks) slots[j] = changed ? [] : [blocks[j]!];
    if (changed && source.blocks.length > 0) {
      slots[source.blocks[0]!] = spliceParts(
        source.blocks.map((j) => blocks[j]!),
        msg.content,
      );
    }
  });
  const result: MessagesFormatMessage[] = [];
  for (const item of out) {
    if ('message' in item) {
      result.push(item.message);
      continue;
    }
    const original = conv.original[item.index]!;
    const blocks = original.content as MessagesBlock[];
    const content = item.slots.flatMap((slot) => slot ?? []);
    if (content.length === 0) continue;
    const same = content.length === blocks.length && content.every((block, j) => block === blocks[j]);
    result.push(same ? original : { ...original, content });
  }
  return result;
}
