import type { ChatMessage, ContentPart, TextPart } from './types.js';

/** One compressible text of a message: its string content, or one text part of its content array. */
export interface TextUnit {
  /** Index of the part in the content array; -1 for string content. */
  part: number;
  text: string;
}

function isTextPart(p: ContentPart): p is TextPart {
  return p.type === 'text' && typeof (p as TextPart).text === 'string';
}

/** The texts of a message the engine may compress; other parts are never touched. */
export function textUnits(msg: ChatMessage): TextUnit[] {
  if (typeof msg.content === 'string') return [{ part: -1, text: msg.content }];
  if (!Array.isArray(msg.content)) return [];
  const units: TextUnit[] = [];
  msg.content.forEach((p, i) => {
    if (isTextPart(p)) units.push({ part: i, text: p.text });
  });
  return units;
}

/** All text of a message (text parts joined by newlines), plus tool-call names and arguments. */
export function searchableText(msg: ChatMessage): string {
  const parts = textUnits(msg).map((u) => u.text);
  for (const call of msg.tool_calls ?? [])
    parts.push(call.function?.name ?? '', call.function?.arguments ?? '');
  return parts.join('\n');
}

/**
 * A copy of `msg` with some texts replaced (key: part index, -1 for string
 * content). Every other field and part is the same object as before.
 */
export function withTexts(msg: ChatMessage, replaced: ReadonlyMap<number, string>): ChatMessage {
  if (replaced.size === 0) return msg;
  if (typeof msg.content === 'string') return { ...msg, content: replaced.get(-1) ?? msg.content };
  if (!Array.isArray(msg.content)) return msg;
  const content = msg.content.map((p, i) => {
    const text = replaced.get(i);
    return text === undefined ? p : { ...p, text };
  });
  return { ...msg, content };
}

/** Index of the last user message, or -1. */
export function lastUserIndex(messages: readonly ChatMessage[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role === 'user') return i;
  return -1;
}

/**
 * Whether the engine may change a message's text: tool outputs only. System
 * and developer prompts, assistant messages and user messages never change.
 * A user message is the latest one when it is first sent, and the latest
 * user message must reach the model unchanged; compressing it on a later
 * turn, once it no longer is the latest, would make its form depend on that
 * later turn and rewrite the provider's cached prefix from it on
 * (principle 2). So a user message is never compressible, from the start.
 */
export function isCompressible(msg: ChatMessage): boolean {
  return msg.role === 'tool' || msg.role === 'function';
}
