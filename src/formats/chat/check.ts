import { isObject } from '../body.js';
import { checkParts, checkToolCalls, typeName } from '../check.js';

/** Roles and parts only the chat format has. */
const CHAT_ROLES = new Set(['system', 'developer', 'tool', 'function']);
const CHAT_PARTS = new Set(['image_url', 'input_audio', 'file']);

/**
 * The first place that marks `messages` as the chat format: a role, field or
 * part only it has. A `system` message counts only when it opens a
 * conversation that has no top-level `system` (Claude Code's messages-format
 * bodies carry `system` messages mid-conversation).
 */
export function signal(
  messages: readonly unknown[],
  body: Record<string, unknown> | undefined,
  prefix: string,
): string | undefined {
  const topSystem = body !== undefined && 'system' in body;
  for (let i = 0; i < messages.length; i++) {
    const msg = messages[i];
    if (!isObject(msg)) continue;
    const at = `${prefix}[${i}]`;
    const role = msg.role;
    if (typeof role === 'string' && CHAT_ROLES.has(role) && (role !== 'system' || (i === 0 && !topSystem)))
      return `${at}.role "${role}"`;
    if ('tool_calls' in msg) return `${at}.tool_calls`;
    if ('tool_call_id' in msg) return `${at}.tool_call_id`;
    if (!Array.isArray(msg.content)) continue;
    for (let j = 0; j < msg.content.length; j++) {
      const part = msg.content[j];
      const type = isObject(part) ? part.type : undefined;
      if (typeof type === 'string' && CHAT_PARTS.has(type)) return `${at}.content[${j}] (${type})`;
    }
  }
  return undefined;
}

/** Chat format: `{role, content, tool_calls?, tool_call_id?}`. */
export function checkShape(
  messages: readonly unknown[],
  _body: Record<string, unknown> | undefined,
  prefix: string,
): string | undefined {
  for (let i = 0; i < messages.length; i++) {
    const msg = messages[i];
    const at = `${prefix}[${i}]`;
    if (!isObject(msg)) return `${at}: expected a message object, got ${typeName(msg)}`;
    if (typeof msg.role !== 'string' || msg.role === '')
      return `${at}.role: expected a string, got ${typeName(msg.role)}`;
    const content = msg.content;
    if (content === undefined && !(msg.role === 'assistant' && 'tool_calls' in msg)) {
      return `${at}.content: missing`;
    }
    if (Array.isArray(content)) {
      const problem = checkParts(content, `${at}.content`);
      if (problem) return problem;
    } else if (content !== undefined && content !== null && typeof content !== 'string') {
      return `${at}.content: expected a string or an array of parts, got ${typeName(content)}`;
    }
    if ('tool_calls' in msg) {
      const problem = checkToolCalls(msg.tool_calls, `${at}.tool_calls`);
      if (problem) return problem;
    }
    if (msg.role === 'tool' && typeof msg.tool_call_id !== 'string') {
      return `${at}.tool_call_id: expected a string on a tool message, got ${typeName(msg.tool_call_id)}`;
    }
  }
  return undefined;
}
