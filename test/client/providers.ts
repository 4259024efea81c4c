/**
 * Mock provider upstreams on loopback, speaking just enough of the chat
 * completions and messages formats for the official SDKs.
 */
import type { ServerResponse } from 'node:http';
import { type MockServer, type Received, sendJson, startMock } from './helpers.js';

function sse(res: ServerResponse, events: Array<{ event?: string; data: unknown }>) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const e of events) {
    res.write(
      `${e.event ? `event: ${e.event}\n` : ''}data: ${typeof e.data === 'string' ? e.data : JSON.stringify(e.data)}\n\n`,
    );
  }
  res.end();
}

/** A chat-completions upstream: `/v1/chat/completions` (JSON or SSE), `/v1/models`, `/v1/responses`. */
export function startOpenAiUpstream(): Promise<MockServer> {
  return startMock((req: Received, res) => {
    const body = req.json as { stream?: boolean; model?: string } | undefined;
    if (req.method === 'POST' && req.url === '/v1/chat/completions') {
      const base = { id: 'chatcmpl-1', created: 1, model: body?.model ?? 'm' };
      if (body?.stream) {
        return sse(res, [
          {
            data: {
              ...base,
              object: 'chat.completion.chunk',
              choices: [{ index: 0, delta: { role: 'assistant', content: 'Hel' }, finish_reason: null }],
            },
          },
          {
            data: {
              ...base,
              object: 'chat.completion.chunk',
              choices: [{ index: 0, delta: { content: 'lo' }, finish_reason: null }],
            },
          },
          {
            data: {
              ...base,
              object: 'chat.completion.chunk',
              choices: [{ index: 0, delta: {}, finish_reason: 'stop' }],
            },
          },
          { data: '[DONE]' },
        ]);
      }
      return sendJson(res, 200, {
        ...base,
        object: 'chat.completion',
        choices: [{ index: 0, message: { role: 'assistant', content: 'Hello' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 },
      });
    }
    if (req.method === 'GET' && req.url === '/v1/models') {
      return sendJson(res, 200, {
        object: 'list',
        data: [{ id: 'gpt-4o', object: 'model', created: 1, owned_by: 'me' }],
      });
    }
    if (req.method === 'POST' && req.url === '/v1/responses') {
      return sendJson(res, 200, { id: 'resp_1', object: 'response', output: [], status: 'completed' });
    }
    sendJson(res, 404, { error: { message: `no route ${req.method} ${req.url}` } });
  });
}

/** A messages upstream: `/v1/messages` (JSON or SSE), `/v1/messages/count_tokens`, `/v1/models`. */
export function startAnthropicUpstream(): Promise<MockServer> {
  return startMock((req: Received, res) => {
    const body = req.json as { stream?: boolean; model?: string } | undefined;
    const message = {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: body?.model ?? 'm',
      stop_sequence: null,
    };
    if (req.method === 'POST' && req.url === '/v1/messages') {
      if (body?.stream) {
        return sse(res, [
          {
            event: 'message_start',
            data: {
              type: 'message_start',
              message: {
                ...message,
                content: [],
                stop_reason: null,
                usage: { input_tokens: 10, output_tokens: 0 },
              },
            },
          },
          {
            event: 'content_block_start',
            data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
          },
          {
            event: 'content_block_delta',
            data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hel' } },
          },
          {
            event: 'content_block_delta',
            data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'lo' } },
          },
          { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
          {
            event: 'message_delta',
            data: {
              type: 'message_delta',
              delta: { stop_reason: 'end_turn', stop_sequence: null },
              usage: { output_tokens: 1 },
            },
          },
          { event: 'message_stop', data: { type: 'message_stop' } },
        ]);
      }
      return sendJson(res, 200, {
        ...message,
        content: [{ type: 'text', text: 'Hello' }],
        stop_reason: 'end_turn',
        usage: { input_tokens: 10, output_tokens: 1 },
      });
    }
    if (req.method === 'POST' && req.url === '/v1/messages/count_tokens')
      return sendJson(res, 200, { input_tokens: 42 });
    if (req.method === 'GET' && req.url?.startsWith('/v1/models')) {
      return sendJson(res, 200, { data: [], has_more: false, first_id: null, last_id: null });
    }
    sendJson(res, 404, {
      type: 'error',
      error: { type: 'not_found_error', message: `no route ${req.method} ${req.url}` },
    });
  });
}
