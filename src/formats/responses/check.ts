import { isObject } from '../body.js';
import { typeName } from '../check.js';

/**
 * No signal: `svc compress` reads a body's `messages`, and a Responses body
 * keeps its conversation in `input`, so `--input-format auto` never picks
 * this format (Responses items read as chat fail the chat shape check, with
 * the place named, instead of compressing nothing).
 */
export function signal(
  _messages: readonly unknown[],
  _body: Record<string, unknown> | undefined,
  _prefix: string,
): string | undefined {
  return undefined;
}

/** Responses items: objects; messages with a role and content; calls and outputs with a `call_id`. */
export function checkShape(
  messages: readonly unknown[],
  _body: Record<string, unknown> | undefined,
  prefix: string,
): string | undefined {
  for (let i = 0; i < messages.length; i++) {
    const item = messages[i];
    const at = `${prefix}[${i}]`;
    if (!isObject(item)) return `${at}: expected an item object, got ${typeName(item)}`;
    const type = item.type ?? (typeof item.role === 'string' ? 'message' : undefined);
    if (type === 'message') {
      if (typeof item.role !== 'string') return `${at}.role: expected a string, got ${typeName(item.role)}`;
      if (typeof item.content !== 'string' && !Array.isArray(item.content))
        return `${at}.content: expected a string or an array of parts, got ${typeName(item.content)}`;
    } else if (typeof type !== 'string') return `${at}.type: expected a string, got ${typeName(type)}`;
    else if (/^(function|custom_tool)_call(_output)?$/.test(type) && typeof item.call_id !== 'string')
      return `${at}.call_id: expected a string, got ${typeName(item.call_id)}`;
  }
  return undefined;
}
