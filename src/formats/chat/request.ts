import type { ChatMessage } from '../../engine/types.js';
import type { JsonPath } from '../../json/spans.js';
import { badBody, isObject } from '../body.js';
import type { ChatOrigin } from '../types.js';

/**
 * The chat-completions format (`/v1/chat/completions`). Its messages are the
 * engine's model already: each message goes to the engine as the original
 * object (system, developer, user, assistant with tool_calls, tool), and
 * content parts other than text (image_url, input_audio, file, refusal) are
 * opaque to it.
 */

/** Reads a chat-completions body into chat messages with their origins. */
export function toChat(body: Record<string, unknown>): { messages: ChatMessage[]; origins: ChatOrigin[] } {
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

/** A message the engine inserted (a drop marker): already a chat message. */
export function fromChat(message: ChatMessage): unknown {
  return message;
}
