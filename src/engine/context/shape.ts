import { lruOfEntries } from '../../lru.js';
import { parseJsonContent } from '../compressors/json-parse.js';
import { contentHash } from '../hash.js';
import { contentText } from '../tokens.js';
import type { ChatMessage } from '../types.js';

/**
 * The shape of a tool output: the tool's name plus a hash of its field names
 * and value types. Never any values, so TOIN can learn per shape without
 * keeping content.
 */
export interface ToolOutputShape {
  /** `tool#hash`, e.g. `list_files#3fa9c2e1`. */
  key: string;
  tool: string;
  /** Field names seen in the output (objects up to depth 3), sorted. */
  fields: string[];
}

const MAX_PARSE = 4 * 1024 * 1024;
const MAX_FIELDS = 64;
const SAMPLE_ITEMS = 20;
const memo = lruOfEntries<string, ToolOutputShape>(5000);

function describe(value: unknown, depth: number, fields: Set<string>): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) {
    const kinds = new Set<string>();
    for (const item of value.slice(0, SAMPLE_ITEMS)) kinds.add(describe(item, depth + 1, fields));
    return `[${[...kinds].sort().join('|')}]`;
  }
  if (typeof value === 'object') {
    if (depth >= 3) return '{}';
    const keys = Object.keys(value as object).sort();
    const parts: string[] = [];
    for (const k of keys) {
      if (fields.size < MAX_FIELDS) fields.add(k);
      parts.push(`${k}:${describe((value as Record<string, unknown>)[k], depth + 1, fields)}`);
    }
    return `{${parts.join(',')}}`;
  }
  return typeof value;
}

/**
 * A whole JSON document's field names and value types, or `text`. Parsed by
 * `parseJsonContent` (the same trim, depth limit and `JSON.parse`), whose
 * result the router's detection and compressors share within an engine call.
 */
function signature(text: string): { sig: string; fields: string[] } {
  if (text.length <= MAX_PARSE || text.trim().length <= MAX_PARSE) {
    const parsed = parseJsonContent(text);
    if (parsed && parsed.shape === 'document' && parsed.preamble === '') {
      const fields = new Set<string>();
      const sig = describe(parsed.value, 0, fields);
      return { sig: `json:${sig}`, fields: [...fields].sort() };
    }
  }
  return { sig: 'text', fields: [] };
}

/**
 * Shape of one tool output (memoized by content).
 *
 * @example toolOutputShape('search', '[{"id":1,"title":"a"}]').key // 'search#<8 hex>'
 */
export function toolOutputShape(tool: string, text: string): ToolOutputShape {
  const memoKey = `${tool}\u0000${contentHash(text)}`;
  const hit = memo.get(memoKey);
  if (hit) return hit;
  const { sig, fields } = signature(text);
  const shape = {
    key: `${tool || 'unknown'}#${contentHash(sig).slice(0, 8)}`,
    tool: tool || 'unknown',
    fields,
  };
  memo.set(memoKey, shape);
  return shape;
}

/** Name of the tool whose result message `index` is, from the assistant call before it. */
export function toolNameFor(messages: readonly ChatMessage[], index: number): string {
  const message = messages[index];
  if (message?.role !== 'tool') return '';
  if (typeof message.name === 'string' && message.name) return message.name;
  for (let k = index - 1; k >= 0; k -= 1) {
    const prev = messages[k]!;
    if (prev.role === 'assistant') {
      const call = prev.tool_calls?.find((c) => c.id === message.tool_call_id);
      return call?.function?.name ?? '';
    }
  }
  return '';
}

/** Shape of tool result message `index`, or undefined when it is not a tool result. */
export function messageShape(messages: readonly ChatMessage[], index: number): ToolOutputShape | undefined {
  const message = messages[index];
  if (message?.role !== 'tool') return undefined;
  return toolOutputShape(toolNameFor(messages, index), contentText(message.content));
}
