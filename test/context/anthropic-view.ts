import type { ChatMessage } from '../../src/engine/types.js';

type Block =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string }
  | { type: 'tool_result'; tool_use_id: string };
export interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: Block[];
}

/**
 * Reference conversion of chat messages to the messages format (as the
 * proxy's converter maps them back): tool results become tool_result blocks
 * of a user message; consecutive user-side messages share one message.
 */
export function toAnthropic(messages: readonly ChatMessage[]): AnthropicMessage[] {
  const out: AnthropicMessage[] = [];
  for (const m of messages) {
    if (m.role === 'system' || m.role === 'developer') continue;
    const role: AnthropicMessage['role'] = m.role === 'assistant' ? 'assistant' : 'user';
    const last = out[out.length - 1];
    const target =
      last && last.role === role && role === 'user' ? last : ({ role, content: [] } as AnthropicMessage);
    if (target !== last) out.push(target);
    if (m.role === 'tool') target.content.push({ type: 'tool_result', tool_use_id: String(m.tool_call_id) });
    else if (typeof m.content === 'string' && m.content)
      target.content.push({ type: 'text', text: m.content });
    for (const c of m.tool_calls ?? [])
      target.content.push({ type: 'tool_use', id: c.id, name: c.function.name });
  }
  return out;
}

/** Throws unless the messages-format conversation would be accepted: user first, strict alternation, tool_use answered next, results first. */
export function assertValidAnthropic(messages: readonly AnthropicMessage[]): void {
  if (messages[0]?.role !== 'user') throw new Error('first message must be user');
  messages.forEach((m, i) => {
    if (i > 0 && messages[i - 1]!.role === m.role) throw new Error(`roles do not alternate at ${i}`);
    const uses = m.content.filter((b) => b.type === 'tool_use').map((b) => (b as { id: string }).id);
    if (uses.length > 0) {
      const next = messages[i + 1];
      if (!next) return;
      const results = next.content
        .filter((b) => b.type === 'tool_result')
        .map((b) => (b as { tool_use_id: string }).tool_use_id);
      if (uses.some((id) => !results.includes(id))) throw new Error(`tool_use at ${i} without result`);
      const firstText = next.content.findIndex((b) => b.type !== 'tool_result');
      const lastResult = next.content.map((b) => b.type).lastIndexOf('tool_result');
      if (firstText !== -1 && lastResult > firstText) throw new Error(`tool_result after text at ${i + 1}`);
    }
    for (const b of m.content) {
      if (b.type !== 'tool_result') continue;
      const prev = messages[i - 1];
      if (!prev?.content.some((p) => p.type === 'tool_use' && p.id === b.tool_use_id))
        throw new Error(`orphan tool_result at ${i}`);
    }
  });
}

/** Throws unless the chat-format conversation is valid: every tool call answered right after, no orphan results. */
export function assertValidChat(messages: readonly ChatMessage[]): void {
  const firstNonSystem = messages.find((m) => m.role !== 'system' && m.role !== 'developer');
  if (firstNonSystem && firstNonSystem.role !== 'user')
    throw new Error('first non-system message must be user');
  let pending = new Set<string>();
  for (const m of messages) {
    if (m.role === 'tool') {
      if (!pending.delete(String(m.tool_call_id))) throw new Error(`orphan tool result ${m.tool_call_id}`);
      continue;
    }
    if (pending.size > 0) throw new Error(`tool calls ${[...pending]} unanswered`);
    pending = new Set((m.tool_calls ?? []).map((c) => c.id));
  }
}
