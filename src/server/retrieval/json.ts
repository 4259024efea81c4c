import { RETRIEVE_TOOL_NAME } from '../../engine/markers.js';
import type { FormatName } from '../../formats/types.js';
import { parseArguments, type RetrievalCall } from './tool.js';

type Json = Record<string, unknown>;
type Block = { type?: unknown; name?: unknown; id?: unknown; input?: unknown };
type ChatCall = { id?: unknown; function?: { name?: unknown; arguments?: unknown } };

const isOurs = (b: Block) => b.type === 'tool_use' && b.name === RETRIEVE_TOOL_NAME;
const isOursChat = (c: ChatCall) => c.function?.name === RETRIEVE_TOOL_NAME;

function chatMessage(json: Json): Json | undefined {
  const choices = json.choices;
  const first = Array.isArray(choices) ? (choices[0] as Json | undefined) : undefined;
  return first && typeof first.message === 'object' && first.message !== null
    ? (first.message as Json)
    : undefined;
}

/**
 * The retrieval calls of a complete (non-streaming) response, and the
 * assistant message to append when answering them: the model's turn with
 * only the retrieval calls (calls of the client's own tools are left out:
 * the model decides on them again once it has what it retrieved).
 */
export function retrievalCallsOf(
  format: FormatName,
  json: Json,
): { calls: RetrievalCall[]; assistant: Json } {
  if (format === 'messages') {
    const content = Array.isArray(json.content) ? (json.content as Block[]) : [];
    const calls = content
      .filter(isOurs)
      .map((b) => ({ id: String(b.id), input: (b.input ?? {}) as RetrievalCall['input'] }));
    const kept = content.filter((b) => b.type !== 'tool_use' || isOurs(b));
    return { calls, assistant: { role: 'assistant', content: kept } };
  }
  const message = chatMessage(json) ?? {};
  const toolCalls = Array.isArray(message.tool_calls) ? (message.tool_calls as ChatCall[]) : [];
  const ours = toolCalls.filter(isOursChat);
  const calls = ours.map((c) => ({
    id: String(c.id),
    input: parseArguments(String(c.function?.arguments ?? '')),
  }));
  return { calls, assistant: { role: 'assistant', content: message.content ?? null, tool_calls: ours } };
}

/**
 * A final response with the retrieval calls taken out (used when the round
 * limit is reached): the client never sees a call to a tool it did not offer.
 */
export function withoutRetrievalCalls(format: FormatName, json: Json): Json {
  if (format === 'messages') {
    const content = (Array.isArray(json.content) ? (json.content as Block[]) : []).filter((b) => !isOurs(b));
    const out: Json = { ...json, content: content.length > 0 ? content : [{ type: 'text', text: '' }] };
    if (json.stop_reason === 'tool_use' && !content.some((b) => b.type === 'tool_use'))
      out.stop_reason = 'end_turn';
    return out;
  }
  const choices = Array.isArray(json.choices) ? (json.choices as Json[]) : [];
  return {
    ...json,
    choices: choices.map((choice) => {
      const message = (choice.message ?? {}) as Json;
      const rest = (Array.isArray(message.tool_calls) ? (message.tool_calls as ChatCall[]) : []).filter(
        (c) => !isOursChat(c),
      );
      const { tool_calls: _drop, ...others } = message;
      const next: Json = { ...others, content: message.content ?? '' };
      if (rest.length > 0) next.tool_calls = rest;
      const finish =
        choice.finish_reason === 'tool_calls' && rest.length === 0 ? 'stop' : choice.finish_reason;
      return { ...choice, message: next, finish_reason: finish };
    }),
  };
}
