import type { ServerResponse } from 'node:http';

/** A messages-format non-streaming response. */
export const MESSAGES_REPLY = {
  id: 'msg_01',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5',
  content: [{ type: 'text', text: 'Fixed it.' }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: {
    input_tokens: 120,
    output_tokens: 9,
    cache_read_input_tokens: 1000,
    cache_creation_input_tokens: 50,
  },
};

/** The events of a messages-format stream, as sent on the wire. */
export const MESSAGES_SSE = [
  `event: message_start\ndata: ${JSON.stringify({ type: 'message_start', message: { ...MESSAGES_REPLY, content: [], stop_reason: null, usage: { input_tokens: 120, output_tokens: 1, cache_read_input_tokens: 1000, cache_creation_input_tokens: 50 } } })}\n\n`,
  `event: content_block_start\ndata: ${JSON.stringify({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } })}\n\n`,
  'event: ping\ndata: {"type": "ping"}\n\n',
  `event: content_block_delta\ndata: ${JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Fixed ' } })}\n\n`,
  `event: content_block_delta\ndata: ${JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'it.' } })}\n\n`,
  `event: content_block_stop\ndata: ${JSON.stringify({ type: 'content_block_stop', index: 0 })}\n\n`,
  `event: message_delta\ndata: ${JSON.stringify({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 9 } })}\n\n`,
  `event: message_stop\ndata: ${JSON.stringify({ type: 'message_stop' })}\n\n`,
];

/** A chat-format non-streaming response. */
export const CHAT_REPLY = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1700000000,
  model: 'gpt-4o',
  choices: [
    {
      index: 0,
      message: { role: 'assistant', content: 'A timeout.', refusal: null },
      finish_reason: 'stop',
      logprobs: null,
    },
  ],
  usage: {
    prompt_tokens: 300,
    completion_tokens: 4,
    total_tokens: 304,
    prompt_tokens_details: { cached_tokens: 200 },
  },
};

function chunk(delta: Record<string, unknown>, finish: string | null, usage: unknown = null): string {
  return `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1700000000, model: 'gpt-4o', choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }], usage })}\n\n`;
}

/** A chat-format stream with the final usage chunk (stream_options.include_usage). */
export const CHAT_SSE = [
  chunk({ role: 'assistant', content: '' }, null),
  chunk({ content: 'A ' }, null),
  chunk({ content: 'timeout.' }, null),
  chunk({}, 'stop'),
  `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1700000000, model: 'gpt-4o', choices: [], usage: { prompt_tokens: 300, completion_tokens: 4, total_tokens: 304 } })}\n\n`,
  'data: [DONE]\n\n',
];

/** Starts an SSE response. */
export function startSse(res: ServerResponse, headers: Record<string, string> = {}): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...headers });
  res.flushHeaders();
}

/** Writes events one at a time, awaiting `between(i)` after event i (a gate or a tick). */
export async function writeEvents(
  res: ServerResponse,
  events: string[],
  between?: (i: number) => Promise<void>,
): Promise<void> {
  for (const [i, e] of events.entries()) {
    res.write(e);
    if (between) await between(i);
  }
  res.end();
}
