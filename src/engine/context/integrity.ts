import type { ChatMessage } from '../types.js';
import { isSystemRole, isUserSide } from './units.js';

/** A message as the messages format sees it after conversion. */
export interface ProviderTurn {
  role: 'user' | 'assistant';
  /** tool_use ids (assistant) or tool_result ids (user), in order. */
  toolUses: string[];
  toolResults: string[];
  /** The turn has text (or other non-tool-result content). */
  text: boolean;
  /** A tool result came after text in the same user turn. */
  resultAfterText: boolean;
}

/**
 * How chat messages map onto the messages format: system prompts leave the
 * list, tool results become tool_result blocks of a user message, and
 * consecutive user-side messages form one user message.
 */
export function toProviderTurns(messages: readonly ChatMessage[]): ProviderTurn[] {
  const turns: ProviderTurn[] = [];
  for (const m of messages) {
    if (isSystemRole(m)) continue;
    const role = isUserSide(m) ? 'user' : 'assistant';
    let turn = turns[turns.length - 1];
    if (!turn || turn.role !== role || role === 'assistant') {
      turn = { role, toolUses: [], toolResults: [], text: false, resultAfterText: false };
      turns.push(turn);
    }
    if (m.role === 'tool') {
      if (turn.text) turn.resultAfterText = true;
      turn.toolResults.push(String(m.tool_call_id ?? ''));
    } else if (role === 'user') {
      turn.text = true;
    }
    for (const call of m.tool_calls ?? []) turn.toolUses.push(call.id);
  }
  return turns;
}

/**
 * Problems that would make a provider reject the conversation, in both
 * formats: the first non-system message must come from the user; user and
 * assistant turns alternate (no two assistant messages in a row); every tool
 * call is answered in the very next user turn, ahead of any text; every tool
 * result answers a call of the assistant message right before it.
 */
export function integrityProblems(messages: readonly ChatMessage[]): string[] {
  const problems: string[] = [];
  const turns = toProviderTurns(messages);
  if (turns.length > 0 && turns[0]!.role !== 'user') problems.push('first message is not from the user');
  turns.forEach((turn, i) => {
    const prev = turns[i - 1];
    if (prev && prev.role === turn.role) problems.push(`turn ${i}: two ${turn.role} messages in a row`);
    if (turn.role === 'user') {
      const calls = new Set(prev?.role === 'assistant' ? prev.toolUses : []);
      for (const id of turn.toolResults)
        if (!calls.has(id)) problems.push(`turn ${i}: tool result ${id} answers no call`);
      if (turn.resultAfterText) problems.push(`turn ${i}: tool result after text`);
    } else if (turn.toolUses.length > 0) {
      const next = turns[i + 1];
      const answered = new Set(next?.role === 'user' ? next.toolResults : []);
      for (const id of turn.toolUses)
        if (next && !answered.has(id)) problems.push(`turn ${i}: tool call ${id} has no result`);
    }
  });
  return problems;
}
