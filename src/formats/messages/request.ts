import type { ChatMessage, ContentPart, ToolCall } from '../../engine/types.js';
import type { JsonPath } from '../../json/spans.js';
import { badBody, isObject } from '../body.js';
import type { ChatOrigin } from '../types.js';

/**
 * The messages format (Anthropic's `/v1/messages`). System may be a string or
 * text blocks; content blocks are text, image, document, tool_use,
 * tool_result, thinking, redacted_thinking, server tool blocks, and whatever
 * comes next. In the engine's model a user message is split into one `tool`
 * message per tool_result and one `user` message per run of other blocks;
 * an assistant message keeps its blocks as parts and its tool_use blocks as
 * tool_calls. Only text is ever written back: every other block reaches the
 * engine as the original object (opaque) and the upstream as the original bytes.
 * Messages before the latest `compaction` block are not read at all.
 */

/** A content block. */
export type Block = Record<string, unknown>;

function blockPart(block: Block): ContentPart {
  return block.type === 'text' && typeof block.text === 'string'
    ? { type: 'text', text: block.text }
    : (block as ContentPart);
}

function blocksToParts(blocks: unknown[], at: JsonPath): { parts: ContentPart[]; paths: JsonPath[] } {
  const parts: ContentPart[] = [];
  const paths: JsonPath[] = [];
  for (let k = 0; k < blocks.length; k++) {
    const block = blocks[k];
    if (!isObject(block) || typeof block.type !== 'string')
      badBody(`${at.join('.')}[${k}]`, 'must be a content block');
    parts.push(blockPart(block));
    paths.push([...at, k]);
  }
  return { parts, paths };
}

function toolCall(block: Block): ToolCall {
  return {
    id: String(block.id ?? ''),
    type: 'function',
    function: { name: String(block.name ?? ''), arguments: JSON.stringify(block.input ?? {}) },
  };
}

interface Converted {
  message: ChatMessage;
  origin: ChatOrigin;
}

function toolResult(block: Block, at: JsonPath, m: number): Converted {
  const message: ChatMessage = { role: 'tool', tool_call_id: String(block.tool_use_id ?? ''), content: '' };
  const origin: ChatOrigin = { owns: [at], message: m };
  if (typeof block.content === 'string') {
    message.content = block.content;
    origin.text = [...at, 'content'];
  } else if (Array.isArray(block.content)) {
    const { parts, paths } = blocksToParts(block.content, [...at, 'content']);
    message.content = parts;
    origin.parts = paths;
  }
  return { message, origin };
}

function assistantMessage(blocks: unknown[], at: JsonPath, m: number): Converted {
  const parts: ContentPart[] = [];
  const paths: JsonPath[] = [];
  const calls: ToolCall[] = [];
  for (let k = 0; k < blocks.length; k++) {
    const block = blocks[k];
    if (!isObject(block) || typeof block.type !== 'string')
      badBody(`messages[${m}].content[${k}]`, 'must be a content block');
    if (block.type === 'tool_use') calls.push(toolCall(block));
    else {
      parts.push(blockPart(block));
      paths.push([...at, 'content', k]);
    }
  }
  const message: ChatMessage = {
    role: 'assistant',
    content: parts.length === 0 && calls.length > 0 ? null : parts,
  };
  if (calls.length > 0) message.tool_calls = calls;
  return { message, origin: { parts: paths, owns: [at], message: m } };
}

function userMessages(role: string, blocks: unknown[], at: JsonPath, m: number): Converted[] {
  const out: Converted[] = [];
  let group: Converted | undefined;
  for (let k = 0; k < blocks.length; k++) {
    const block = blocks[k];
    if (!isObject(block) || typeof block.type !== 'string')
      badBody(`messages[${m}].content[${k}]`, 'must be a content block');
    const path = [...at, 'content', k];
    if (block.type === 'tool_result') {
      group = undefined;
      out.push(toolResult(block, path, m));
      continue;
    }
    if (!group) {
      group = { message: { role, content: [] }, origin: { parts: [], owns: [], message: m } };
      out.push(group);
    }
    (group.message.content as ContentPart[]).push(blockPart(block));
    group.origin.parts!.push(path);
    group.origin.owns.push(path);
  }
  if (out.length === 0)
    out.push({ message: { role, content: [] }, origin: { parts: [], owns: [at], message: m } });
  else if (out.length === 1 && out[0]!.message.role !== 'tool') out[0]!.origin.owns = [at];
  return out;
}

/**
 * Conversions of body messages, by the parsed message object and its index.
 * A body parsed by the proxy's `PrefixParser` reuses the objects of the
 * earlier turn's messages, so they convert to the same chat messages, which
 * the engine's per-message memos then recognise by identity (principle 4).
 * Parsed bodies are never modified, so an object converts the same way again.
 */
const convertedAt = new WeakMap<object, { m: number; list: Converted[] }>();

/**
 * Index of the latest message holding a `compaction` block, else 0. The
 * provider reads the compaction in place of every message before it, so
 * those are not compressed (their bytes go as they came); the block itself
 * is opaque, like every non-text block.
 */
function latestCompaction(messages: readonly unknown[]): number {
  for (let m = messages.length - 1; m >= 0; m--) {
    const msg = messages[m];
    if (
      isObject(msg) &&
      Array.isArray(msg.content) &&
      msg.content.some((b) => isObject(b) && b.type === 'compaction')
    )
      return m;
  }
  return 0;
}

/** Reads a messages-format body into chat messages with their origins. */
export function toChat(body: Record<string, unknown>): { messages: ChatMessage[]; origins: ChatOrigin[] } {
  const messages: ChatMessage[] = [];
  const origins: ChatOrigin[] = [];
  const { system } = body;
  if (typeof system === 'string') {
    messages.push({ role: 'system', content: system });
    origins.push({ text: ['system'], owns: [], message: -1 });
  } else if (Array.isArray(system)) {
    const { parts, paths } = blocksToParts(system, ['system']);
    messages.push({ role: 'system', content: parts });
    origins.push({ parts: paths, owns: [], message: -1 });
  } else if (system !== undefined) badBody('system', 'must be a string or an array of blocks');
  if (!Array.isArray(body.messages)) badBody('messages', 'must be an array');
  const from = latestCompaction(body.messages);
  // loops, not callbacks made per request: see engine/compressors/json-walk.ts on closures
  for (let m = 0; m < body.messages.length; m++) {
    const msg: unknown = body.messages[m];
    if (!isObject(msg) || typeof msg.role !== 'string')
      badBody(`messages[${m}]`, 'must be an object with a role');
    if (m < from) continue;
    const known = convertedAt.get(msg);
    if (known?.m === m) {
      for (const c of known.list) {
        messages.push(c.message);
        origins.push(c.origin);
      }
      continue;
    }
    const at: JsonPath = ['messages', m];
    let converted: Converted[];
    if (typeof msg.content === 'string') {
      converted = [
        {
          message: { role: msg.role, content: msg.content },
          origin: { text: [...at, 'content'], owns: [at], message: m },
        },
      ];
    } else if (Array.isArray(msg.content)) {
      converted =
        msg.role === 'assistant'
          ? [assistantMessage(msg.content, at, m)]
          : userMessages(msg.role, msg.content, at, m);
    } else badBody(`messages[${m}].content`, 'must be a string or an array of blocks');
    convertedAt.set(msg, { m, list: converted });
    for (const c of converted) {
      messages.push(c.message);
      origins.push(c.origin);
    }
  }
  return { messages, origins };
}

/** A message the engine inserted (a drop marker), as a messages-format message. */
export function fromChat(message: ChatMessage): unknown {
  const role = message.role === 'assistant' ? 'assistant' : 'user';
  if (typeof message.content === 'string') return { role, content: message.content };
  const blocks = (message.content ?? [])
    .filter((p) => p.type === 'text')
    .map((p) => ({ type: 'text', text: p.text }));
  return { role, content: blocks };
}
