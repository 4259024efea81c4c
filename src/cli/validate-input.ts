/**
 * Shape checks of `svc compress` inputs. Each returns the first problem as
 * `path: what is wrong` (`messages[3].content[1].tool_use_id: expected a
 * string`), or undefined when the input is well formed.
 */

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function typeName(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

function checkParts(parts: unknown[], at: string): string | undefined {
  for (let j = 0; j < parts.length; j++) {
    const part = parts[j];
    if (!isObject(part)) return `${at}[${j}]: expected a content part object, got ${typeName(part)}`;
    if (typeof part.type !== 'string')
      return `${at}[${j}].type: expected a string, got ${typeName(part.type)}`;
    if (part.type === 'text' && typeof part.text !== 'string') {
      return `${at}[${j}].text: expected a string, got ${typeName(part.text)}`;
    }
  }
  return undefined;
}

function checkToolCalls(calls: unknown, at: string): string | undefined {
  if (!Array.isArray(calls)) return `${at}: expected an array, got ${typeName(calls)}`;
  for (let j = 0; j < calls.length; j++) {
    const call = calls[j];
    const here = `${at}[${j}]`;
    if (!isObject(call)) return `${here}: expected a tool call object, got ${typeName(call)}`;
    if (typeof call.id !== 'string') return `${here}.id: expected a string, got ${typeName(call.id)}`;
    const fn = call.function;
    if (!isObject(fn)) return `${here}.function: expected an object, got ${typeName(fn)}`;
    if (typeof fn.name !== 'string')
      return `${here}.function.name: expected a string, got ${typeName(fn.name)}`;
    if (typeof fn.arguments !== 'string') {
      return `${here}.function.arguments: expected a JSON string, got ${typeName(fn.arguments)}`;
    }
  }
  return undefined;
}

/** Chat format: `{role, content, tool_calls?, tool_call_id?}`. */
export function validateChatMessages(messages: unknown[], prefix: string): string | undefined {
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

/** Messages format: `{role: user|assistant, content: string | blocks}` plus a top-level `system`. */
export function validateMessagesFormat(
  messages: unknown[],
  system: unknown,
  prefix: string,
): string | undefined {
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
    if (msg.role !== 'user' && msg.role !== 'assistant') {
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
      const blockProblem = checkBlock(content[j] as Record<string, unknown>, msg.role, `${at}.content[${j}]`);
      if (blockProblem) return blockProblem;
    }
  }
  return undefined;
}
