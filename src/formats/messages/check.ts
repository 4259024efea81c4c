import { isObject } from '../body.js';
import { checkParts, typeName } from '../check.js';

/** Block types only the messages format has. */
const MESSAGES_BLOCKS = new Set([
  'tool_use',
  'tool_result',
  'thinking',
  'redacted_thinking',
  'server_tool_use',
  'web_search_tool_result',
  'document',
  'search_result',
  'mcp_tool_use',
  'mcp_tool_result',
  'container_upload',
]);
/** The first place that marks a body as the messages format: a top-level `system`, or a block only it has. */
export function signal(
  messages: readonly unknown[],
  body: Record<string, unknown> | undefined,
  prefix: string,
): string | undefined {
  if (body && 'system' in body) return 'the top-level "system" field';
  for (let i = 0; i < messages.length; i++) {
    const msg = messages[i];
    if (!isObject(msg) || !Array.isArray(msg.content)) continue;
    for (let j = 0; j < msg.content.length; j++) {
      const part = msg.content[j];
      const type = isObject(part) ? part.type : undefined;
      if (typeof type !== 'string') continue;
      if (MESSAGES_BLOCKS.has(type)) return `${prefix}[${i}].content[${j}] (${type})`;
      if (type === 'image' && isObject(part) && 'source' in part)
        return `${prefix}[${i}].content[${j}] (image source)`;
    }
  }
  return undefined;
}

function checkBlock(block: Record<string, unknown>, role: string, at: string): string | undefined {
  switch (block.type) {
    case 'text':
      return typeof block.text === 'string'
        ? undefined
        : `${at}.text: expected a string, got ${typeName(block.text)}`;
    case 'tool_use':
      if (role !== 'assistant') return `${at}: a tool_use block belongs in an assistant message`;
      if (typeof block.id !== 'string') return `${at}.id: expected a string, got ${typeName(block.id)}`;
      if (typeof block.name !== 'string') return `${at}.name: expected a string, got ${typeName(block.name)}`;
      return isObject(block.input)
        ? undefined
        : `${at}.input: expected an object, got ${typeName(block.input)}`;
    case 'tool_result': {
      if (role !== 'user') return `${at}: a tool_result block belongs in a user message`;
      if (typeof block.tool_use_id !== 'string') {
        return `${at}.tool_use_id: expected a string, got ${typeName(block.tool_use_id)}`;
      }
      const content = block.content;
      if (Array.isArray(content)) return checkParts(content, `${at}.content`);
      if (content !== undefined && typeof content !== 'string') {
        return `${at}.content: expected a string or an array of blocks, got ${typeName(content)}`;
      }
      return undefined;
    }
    default:
      return undefined;
  }
}

/**
 * Messages format: `{role: user|assistant, content: string | blocks}` plus a
 * top-level `system`. A `system` message is accepted after the first one:
 * Claude Code sends them mid-conversation, and the provider takes them.
 */
export function checkShape(
  messages: readonly unknown[],
  body: Record<string, unknown> | undefined,
  prefix: string,
): string | undefined {
  const system = body?.system;
  if (system !== undefined && typeof system !== 'string') {
    if (!Array.isArray(system))
      return `system: expected a string or an array of text blocks, got ${typeName(system)}`;
    const problem = checkParts(system, 'system');
    if (problem) return problem;
  }
  for (let i = 0; i < messages.length; i++) {
    const msg = messages[i];
    const at = `${prefix}[${i}]`;
    if (!isObject(msg)) return `${at}: expected a message object, got ${typeName(msg)}`;
    const midSystem = msg.role === 'system' && i > 0;
    if (msg.role !== 'user' && msg.role !== 'assistant' && !midSystem) {
      const got = typeof msg.role === 'string' ? `"${msg.role}"` : typeName(msg.role);
      return `${at}.role: expected "user" or "assistant" in the messages format, got ${got}`;
    }
    const content = msg.content;
    if (typeof content === 'string') continue;
    if (!Array.isArray(content))
      return `${at}.content: expected a string or an array of blocks, got ${typeName(content)}`;
    const problem = checkParts(content, `${at}.content`);
    if (problem) return problem;
    for (let j = 0; j < content.length; j++) {
      const blockProblem = checkBlock(
        content[j] as Record<string, unknown>,
        String(msg.role),
        `${at}.content[${j}]`,
      );
      if (blockProblem) return blockProblem;
    }
  }
  return undefined;
}
