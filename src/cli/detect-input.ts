import { SvcError } from '../errors.js';
import { validateChatMessages, validateMessagesFormat } from './validate-input.js';

/** The two message formats `svc compress` reads and writes. */
export type InputFormat = 'chat' | 'messages';

/** What `--input-format` accepts. */
export const INPUT_FORMATS = ['auto', 'chat', 'messages'] as const;
export type InputFormatChoice = (typeof INPUT_FORMATS)[number];

/** A parsed, validated input of `svc compress`. */
export interface DetectedInput {
  format: InputFormat;
  /** The request body when the input was an object; undefined for a bare array. */
  body: Record<string, unknown> | undefined;
  /** The messages, validated for `format`. */
  messages: unknown[];
  /** `model` of the body, when it has one. */
  model: string | undefined;
  /** Why the format was chosen (for `--summary` and errors). */
  reason: string;
}

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
/** Roles and parts only the chat format has. */
const CHAT_ROLES = new Set(['system', 'developer', 'tool', 'function']);
const CHAT_PARTS = new Set(['image_url', 'input_audio', 'file']);

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The first place that marks the messages as one format or the other. */
function findSignals(messages: unknown[], body: Record<string, unknown> | undefined, prefix: string) {
  let chat: string | undefined;
  let anthropic: string | undefined = body && 'system' in body ? 'the top-level "system" field' : undefined;
  messages.forEach((msg, i) => {
    if (!isObject(msg)) return;
    const at = `${prefix}[${i}]`;
    if (!chat && typeof msg.role === 'string' && CHAT_ROLES.has(msg.role)) chat = `${at}.role "${msg.role}"`;
    if (!chat && 'tool_calls' in msg) chat = `${at}.tool_calls`;
    if (!chat && 'tool_call_id' in msg) chat = `${at}.tool_call_id`;
    if (!Array.isArray(msg.content)) return;
    msg.content.forEach((part, j) => {
      const type = isObject(part) ? part.type : undefined;
      if (typeof type !== 'string') return;
      if (!anthropic && MESSAGES_BLOCKS.has(type)) anthropic = `${at}.content[${j}] (${type})`;
      if (!anthropic && type === 'image' && 'source' in part)
        anthropic = `${at}.content[${j}] (image source)`;
      if (!chat && CHAT_PARTS.has(type)) chat = `${at}.content[${j}] (${type})`;
    });
  });
  return { chat, anthropic };
}

/**
 * Works out what an input is: a chat-completions body `{model, messages}`,
 * a bare messages array, or a messages-format body (content blocks with
 * `tool_use` / `tool_result`, a top-level `system`). Plain text
 * conversations read the same in both formats and are taken as chat.
 * Throws SVC_BAD_INPUT naming the place (`convo.json: messages[3].role: ...`).
 */
export function detectInput(
  value: unknown,
  where: string,
  choice: InputFormatChoice = 'auto',
): DetectedInput {
  let body: Record<string, unknown> | undefined;
  let messages: unknown[];
  const expected = 'expected a request body {"model", "messages": [...]} or an array of messages';
  if (Array.isArray(value)) messages = value;
  else if (isObject(value)) {
    body = value;
    if (!('messages' in value)) {
      const keys = Object.keys(value).slice(0, 6).join(', ');
      throw new SvcError(
        'SVC_BAD_INPUT',
        `${where}: ${expected}; got an object with keys: ${keys || '(none)'}`,
      );
    }
    if (!Array.isArray(value.messages)) {
      throw new SvcError(
        'SVC_BAD_INPUT',
        `${where}: messages: expected an array, got ${typeName(value.messages)}`,
      );
    }
    messages = value.messages;
    if (value.model !== undefined && typeof value.model !== 'string') {
      throw new SvcError('SVC_BAD_INPUT', `${where}: model: expected a string, got ${typeName(value.model)}`);
    }
  } else throw new SvcError('SVC_BAD_INPUT', `${where}: ${expected}; got ${typeName(value)}`);
  const prefix = body ? 'messages' : '';
  if (messages.length === 0)
    throw new SvcError('SVC_BAD_INPUT', `${where}: ${prefix || 'input'}: no messages, nothing to compress`);

  let format: InputFormat;
  let reason: string;
  if (choice !== 'auto') {
    format = choice;
    reason = `--input-format ${choice}`;
  } else {
    const { chat, anthropic } = findSignals(messages, body, prefix);
    if (chat && anthropic) {
      throw new SvcError(
        'SVC_BAD_INPUT',
        `${where}: mixes chat format (${chat}) and messages format (${anthropic}); choose one with --input-format`,
      );
    }
    format = anthropic ? 'messages' : 'chat';
    reason = anthropic
      ? `messages format: ${anthropic}`
      : chat
        ? `chat format: ${chat}`
        : 'plain text messages';
  }
  const problem =
    format === 'chat'
      ? validateChatMessages(messages, prefix)
      : validateMessagesFormat(messages, body?.system, prefix);
  if (problem) throw new SvcError('SVC_BAD_INPUT', `${where}: ${problem}`);
  const model = typeof body?.model === 'string' && body.model !== '' ? body.model : undefined;
  return { format, body, messages, model, reason };
}
