import { isObject } from '../body.js';
import { typeName } from '../check.js';

/** Item types only the Responses format has. */
const ITEM_TYPES = new Set([
  'function_call',
  'function_call_output',
  'custom_tool_call',
  'custom_tool_call_output',
  'reasoning',
  'compaction',
  'item_reference',
]);

/**
 * The first place that marks a list as Responses `input` items: an item type
 * only it has. (`svc compress` reads request bodies by their `messages`; a
 * Responses body has `input`, so it is named with `--input-format responses`.)
 */
export function signal(
  messages: readonly unknown[],
  _body: Record<string, unknown> | undefined,
  prefix: string,
): string | undefined {
  for (let i = 0; i < messages.length; i++) {
    const item = messages[i];
    if (isObject(item) && typeof item.type === 'string' && ITEM_TYPES.has(item.type))
      return `${prefix}[${i}].type "${item.type}"`;
  }
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
