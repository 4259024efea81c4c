import { textUnits } from '../messages.js';
import type { ChatMessage } from '../types.js';
import type { ContextUnit } from './types.js';

/** True for roles that belong to the provider's "user" side (tool results travel there). */
export function isUserSide(message: ChatMessage): boolean {
  return message.role === 'user' || message.role === 'tool';
}

/** True for the system prompt roles. */
export function isSystemRole(message: ChatMessage): boolean {
  return message.role === 'system' || message.role === 'developer';
}

function hasToolCalls(message: ChatMessage): boolean {
  return message.role === 'assistant' && Array.isArray(message.tool_calls) && message.tool_calls.length > 0;
}

/**
 * Groups messages into units that are kept or dropped whole.
 *
 * - an assistant message with tool calls, plus the run of tool/user messages
 *   that follows it (its results, and any text the client sent in the same
 *   provider message: in the messages format these are one user message);
 * - a run of user messages plus the assistant answer that follows it, when
 *   that answer makes no tool calls;
 * - otherwise single messages (system prompts, a lone assistant answer, a
 *   user run followed by a tool call).
 *
 * Protected: system prompts, the unit of the latest user message, the last
 * `protectTurns` non-system units, and always the final unit. Also, so that
 * the latest user message stays the last user message the model sees: every
 * unit after it whose previous unit does not end with a tool output that can
 * host a drop marker (see `markerHost`).
 */
export function buildUnits(messages: readonly ChatMessage[], protectTurns: number): ContextUnit[] {
  const units: ContextUnit[] = [];
  const push = (start: number, end: number, kind: ContextUnit['kind']) => {
    units.push({ index: units.length, start, end, kind, protected: kind === 'system' });
  };
  let i = 0;
  while (i < messages.length) {
    const message = messages[i]!;
    if (isSystemRole(message)) {
      push(i, i + 1, 'system');
      i += 1;
    } else if (hasToolCalls(message)) {
      let j = i + 1;
      while (j < messages.length && isUserSide(messages[j]!)) j += 1;
      push(i, j, 'tool');
      i = j;
    } else if (isUserSide(message)) {
      let j = i;
      while (j < messages.length && isUserSide(messages[j]!)) j += 1;
      const next = messages[j];
      if (next && next.role === 'assistant' && !hasToolCalls(next)) {
        push(i, j + 1, 'turn');
        i = j + 1;
      } else {
        push(i, j, 'single');
        i = j;
      }
    } else {
      push(i, i + 1, 'single');
      i += 1;
    }
  }
  protectUnits(messages, units, protectTurns);
  return units;
}

function protectUnits(messages: readonly ChatMessage[], units: ContextUnit[], protectTurns: number): void {
  let latestUser = -1;
  for (let k = messages.length - 1; k >= 0; k -= 1) {
    if (messages[k]!.role === 'user') {
      latestUser = k;
      break;
    }
  }
  let recent = 0;
  for (let u = units.length - 1; u >= 0; u -= 1) {
    const unit = units[u]!;
    if (unit.kind === 'system') continue;
    if (u === units.length - 1 || recent < protectTurns) unit.protected = true;
    if (latestUser >= unit.start && latestUser < unit.end) unit.protected = true;
    // After the latest user message a drop marker may not be a user message of its own.
    if (unit.start > latestUser && !markerHost(messages, unit.start - 1)) unit.protected = true;
    recent += 1;
  }
}

/**
 * Whether message `i` can carry the marker of a dropped run that follows it:
 * a tool output with text. The marker is then appended to that output
 * instead of standing as a user message of its own, which after the latest
 * user message would become the last user message the model sees.
 */
export function markerHost(messages: readonly ChatMessage[], i: number): boolean {
  const m = messages[i];
  return m !== undefined && (m.role === 'tool' || m.role === 'function') && textUnits(m).length > 0;
}
