import type { ChatMessage, ContentPart } from '../../engine/types.js';
import type { JsonPath } from '../../json/spans.js';
import { badBody, intField, isObject } from '../body.js';
import type { ChatOrigin } from '../types.js';

/**
 * The OpenAI Responses format (`/v1/responses`, what Codex speaks). The
 * conversation is `input`: a string, or a list of items. In the engine's
 * model `instructions` is the system prompt (protected); a message item is a
 * chat message (`system` and `developer` as system messages, protected;
 * `input_text` / `output_text` parts are text, other parts opaque); a
 * `function_call` or `custom_tool_call` is an assistant turn with one tool
 * call (never changed); its `function_call_output` / `custom_tool_call_output`
 * is a tool message, compressed like any tool output. Reasoning items,
 * compaction items (`encrypted_content`), item references and every other item
 * type never reach the engine: their bytes go upstream as they came. Items
 * before the latest compaction item are not compressed either (the provider
 * reads the compaction in their place). Every other field (`tools`,
 * `previous_response_id`, `store`, `prompt_cache_key`,
 * `prompt_cache_retention`, `context_management`, `reasoning`, ...) is never
 * read: a request continuing server-side state has only its new items, and
 * only those are compressed.
 */

type Item = Record<string, unknown>;

/** Item types the engine sees as tool calls, and as their outputs. */
const CALLS = new Set(['function_call', 'custom_tool_call']);
const OUTPUTS = new Set(['function_call_output', 'custom_tool_call_output']);
/** Part types holding text the engine may compress. */
const TEXT_PARTS = new Set(['input_text', 'output_text']);

function parts(content: unknown[], at: JsonPath): { parts: ContentPart[]; paths: JsonPath[] } {
  const out: ContentPart[] = [];
  const paths: JsonPath[] = [];
  content.forEach((part, k) => {
    if (!isObject(part) || typeof part.type !== 'string')
      badBody(`${at.join('.')}[${k}]`, 'must be a content part');
    out.push(
      TEXT_PARTS.has(part.type) && typeof part.text === 'string'
        ? { type: 'text', text: part.text }
        : (part as ContentPart),
    );
    paths.push([...at, k]);
  });
  return { parts: out, paths };
}

/** The chat message of one item, or undefined for an item the engine never sees. */
function itemToChat(item: Item, i: number): { message: ChatMessage; origin: ChatOrigin } | undefined {
  const at: JsonPath = ['input', i];
  const type = item.type ?? (typeof item.role === 'string' ? 'message' : undefined);
  if (type === 'message') {
    if (typeof item.role !== 'string') badBody(`input[${i}].role`, 'must be a string');
    const role = item.role === 'developer' ? 'system' : item.role;
    const origin: ChatOrigin = { owns: [at], message: i };
    if (typeof item.content === 'string') {
      origin.text = [...at, 'content'];
      return { message: { role, content: item.content }, origin };
    }
    if (!Array.isArray(item.content)) badBody(`input[${i}].content`, 'must be a string or an array of parts');
    const read = parts(item.content, [...at, 'content']);
    origin.parts = read.paths;
    return { message: { role, content: read.parts }, origin };
  }
  if (typeof type === 'string' && CALLS.has(type)) {
    const args =
      type === 'function_call' ? String(item.arguments ?? '') : JSON.stringify({ input: item.input ?? '' });
    const message: ChatMessage = {
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: String(item.call_id ?? ''),
          type: 'function',
          function: { name: String(item.name ?? ''), arguments: args },
        },
      ],
    };
    return { message, origin: { owns: [at], message: i } };
  }
  if (typeof type === 'string' && OUTPUTS.has(type)) {
    const message: ChatMessage = { role: 'tool', tool_call_id: String(item.call_id ?? ''), content: '' };
    const origin: ChatOrigin = { owns: [at], message: i };
    if (typeof item.output === 'string') {
      message.content = item.output;
      origin.text = [...at, 'output'];
    } else if (Array.isArray(item.output)) {
      const read = parts(item.output, [...at, 'output']);
      message.content = read.parts;
      origin.parts = read.paths;
    }
    return { message, origin };
  }
  return undefined;
}

/** Index of the latest compaction item: the provider reads it in place of everything before it. */
function latestCompaction(input: readonly unknown[]): number {
  for (let i = input.length - 1; i >= 0; i--) {
    const item = input[i];
    if (isObject(item) && item.type === 'compaction') return i;
  }
  return -1;
}

/** Reads a Responses body into chat messages with their origins. */
export function toChat(body: Record<string, unknown>): { messages: ChatMessage[]; origins: ChatOrigin[] } {
  const messages: ChatMessage[] = [];
  const origins: ChatOrigin[] = [];
  const { instructions, input } = body;
  if (typeof instructions === 'string') {
    messages.push({ role: 'system', content: instructions });
    origins.push({ text: ['instructions'], owns: [], message: -1 });
  } else if (instructions !== undefined && instructions !== null) badBody('instructions', 'must be a string');
  if (typeof input === 'string') {
    // One user message, never dropped (there is nothing to drop it into).
    messages.push({ role: 'user', content: input });
    origins.push({ text: ['input'], owns: [], message: -1 });
    return { messages, origins };
  }
  if (input === undefined) return { messages, origins };
  if (!Array.isArray(input)) badBody('input', 'must be a string or an array of items');
  const from = latestCompaction(input) + 1;
  for (let i = from; i < input.length; i++) {
    const item = input[i];
    if (!isObject(item)) badBody(`input[${i}]`, 'must be an item object');
    const converted = itemToChat(item, i);
    if (!converted) continue;
    messages.push(converted.message);
    origins.push(converted.origin);
  }
  return { messages, origins };
}

/** A message the engine inserted (a drop marker), as an input message item. */
export function fromChat(message: ChatMessage): unknown {
  const role = message.role === 'assistant' ? 'assistant' : 'user';
  const text =
    typeof message.content === 'string'
      ? message.content
      : (message.content ?? [])
          .filter((p) => p.type === 'text')
          .map((p) => p.text)
          .join('\n');
  return { role, content: text };
}

/** `max_output_tokens`: the answer budget of a Responses request. */
export function maxTokens(body: Record<string, unknown>): number | undefined {
  return intField(body.max_output_tokens);
}
