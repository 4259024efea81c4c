import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { filler } from '../context/helpers.js';
import {
  type MockUpstream,
  type RecordedRequest,
  replyJson,
  startMockUpstream,
  startSvc,
  type TestSvc,
  until,
} from '../server/helpers.js';
import { startSse, writeEvents } from '../server/sse-mocks.js';

let svc: TestSvc | undefined;
let mock: MockUpstream | undefined;
afterEach(async () => {
  await svc?.close();
  await mock?.close();
  svc = mock = undefined;
});

const ANSWER = 'The failing test is in src/billing.ts.';

/** A long agent session in the messages format, well over a 6000-token limit. */
function messagesBody(stream: boolean): Record<string, unknown> {
  const messages: unknown[] = [{ role: 'user', content: 'Find the failing test.' }];
  for (let n = 0; n < 30; n += 1) {
    messages.push({
      role: 'assistant',
      content: [{ type: 'tool_use', id: `toolu_${n}`, name: 'Bash', input: { cmd: `cat f${n}.log` } }],
    });
    messages.push({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: `toolu_${n}`, content: `needle_${n} ${filler(n, 200)}` }],
    });
  }
  messages.push(
    { role: 'assistant', content: 'Read them all.' },
    { role: 'user', content: 'Which test fails?' },
  );
  return { model: 'claude-sonnet-4-5', max_tokens: 1000, stream, messages };
}

function chatBody(stream: boolean): Record<string, unknown> {
  const messages: unknown[] = [{ role: 'user', content: 'Find the failing test.' }];
  for (let n = 0; n < 30; n += 1) {
    messages.push({
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: `call_${n}`,
          type: 'function',
          function: { name: 'bash', arguments: `{"cmd":"cat f${n}.log"}` },
        },
      ],
    });
    messages.push({ role: 'tool', tool_call_id: `call_${n}`, content: `needle_${n} ${filler(n, 200)}` });
  }
  messages.push(
    { role: 'assistant', content: 'Read them all.' },
    { role: 'user', content: 'Which test fails?' },
  );
  return { model: 'gpt-4o', max_tokens: 1000, stream, messages };
}

const hashIn = (req: RecordedRequest) => /svc_retrieve hash=([0-9a-f]{24})/.exec(req.body.toString())?.[1];

function messagesRound1(hash: string): string[] {
  const ev = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
  return [
    ev('message_start', {
      type: 'message_start',
      message: {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-5',
        content: [],
        stop_reason: null,
        usage: { input_tokens: 50, output_tokens: 1 },
      },
    }),
    ev('content_block_start', {
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'text', text: '' },
    }),
    ev('content_block_delta', {
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'text_delta', text: 'Let me look. ' },
    }),
    ev('content_block_stop', { type: 'content_block_stop', index: 0 }),
    ev('content_block_start', {
      type: 'content_block_start',
      index: 1,
      content_block: { type: 'tool_use', id: 'toolu_r1', name: 'svc_retrieve', input: {} },
    }),
    ev('content_block_delta', {
      type: 'content_block_delta',
      index: 1,
      delta: { type: 'input_json_delta', partial_json: `{"hash":"${hash}"` },
    }),
    ev('content_block_delta', {
      type: 'content_block_delta',
      index: 1,
      delta: { type: 'input_json_delta', partial_json: '}' },
    }),
    ev('content_block_stop', { type: 'content_block_stop', index: 1 }),
    ev('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: 'tool_use', stop_sequence: null },
      usage: { output_tokens: 20 },
    }),
    ev('message_stop', { type: 'message_stop' }),
  ];
}

function messagesRound2(): string[] {
  const ev = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
  return [
    ev('message_start', {
      type: 'message_start',
      message: {
        id: 'msg_2',
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-5',
        content: [],
        stop_reason: null,
        usage: { input_tokens: 80, output_tokens: 1 },
      },
    }),
    ev('content_block_start', {
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'text', text: '' },
    }),
    ev('content_block_delta', {
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'text_delta', text: ANSWER },
    }),
    ev('content_block_stop', { type: 'content_block_stop', index: 0 }),
    ev('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: 12 },
    }),
    ev('message_stop', { type: 'message_stop' }),
  ];
}

const chunk = (delta: unknown, finish: string | null = null, id = 'chatcmpl-x') =>
  `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

async function retrievalUpstream(format: 'messages' | 'chat', stream: boolean): Promise<MockUpstream> {
  return startMockUpstream(async (req, res: ServerResponse) => {
    const body = JSON.parse(req.body.toString());
    const last = body.messages.at(-1);
    const answered =
      format === 'messages'
        ? Array.isArray(last.content) && last.content[0]?.type === 'tool_result'
        : last.role === 'tool';
    const hash = hashIn(req)!;
    if (!stream) {
      if (format === 'messages') {
        return replyJson(
          res,
          200,
          answered
            ? {
                id: 'msg_2',
                type: 'message',
                role: 'assistant',
                model: 'm',
                content: [{ type: 'text', text: ANSWER }],
                stop_reason: 'end_turn',
                usage: { input_tokens: 80, output_tokens: 12 },
              }
            : {
                id: 'msg_1',
                type: 'message',
                role: 'assistant',
                model: 'm',
                content: [
                  { type: 'text', text: 'Let me look.' },
                  { type: 'tool_use', id: 'toolu_r1', name: 'svc_retrieve', input: { hash } },
                ],
                stop_reason: 'tool_use',
                usage: { input_tokens: 50, output_tokens: 20 },
              },
        );
      }
      return replyJson(res, 200, {
        id: 'chatcmpl-x',
        object: 'chat.completion',
        created: 1,
        model: 'gpt-4o',
        choices: [
          answered
            ? { index: 0, message: { role: 'assistant', content: ANSWER }, finish_reason: 'stop' }
            : {
                index: 0,
                message: {
                  role: 'assistant',
                  content: null,
                  tool_calls: [
                    {
                      id: 'call_r1',
                      type: 'function',
                      function: { name: 'svc_retrieve', arguments: JSON.stringify({ hash }) },
                    },
                  ],
                },
                finish_reason: 'tool_calls',
              },
        ],
        usage: { prompt_tokens: 50, completion_tokens: 10, total_tokens: 60 },
      });
    }
    startSse(res);
    if (format === 'messages') return writeEvents(res, answered ? messagesRound2() : messagesRound1(hash));
    return writeEvents(
      res,
      answered
        ? [
            chunk({ role: 'assistant', content: '' }, null, 'chatcmpl-2'),
            chunk({ content: ANSWER }, null, 'chatcmpl-2'),
            chunk({}, 'stop', 'chatcmpl-2'),
            'data: [DONE]\n\n',
          ]
        : [
            chunk({ role: 'assistant', content: '' }),
            chunk({
              tool_calls: [
                {
                  index: 0,
                  id: 'call_r1',
                  type: 'function',
                  function: { name: 'svc_retrieve', arguments: '' },
                },
              ],
            }),
            chunk({ tool_calls: [{ index: 0, function: { arguments: JSON.stringify({ hash }) } }] }),
            chunk({}, 'tool_calls'),
            'data: [DONE]\n\n',
          ],
    );
  });
}

async function run(format: 'messages' | 'chat', stream: boolean) {
  mock = await retrievalUpstream(format, stream);
  svc = await startSvc({
    flags: {
      'messages-api-url': `${mock.url}/v1`,
      'compat-api-url': `${mock.url}/v1`,
      'context-limit': 6000,
      'compress-first': false,
    },
  });
  const retrieved: string[] = [];
  svc.server.ctx.bus.on('retrieved', (e) => retrieved.push(`${e.via}:${e.found}`));
  const path = format === 'messages' ? '/v1/messages' : '/v1/chat/completions';
  const res = await fetch(svc.url + path, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-api-key': 'k',
      authorization: 'Bearer k',
      'anthropic-version': '2023-06-01',
    },
    body: JSON.stringify(format === 'messages' ? messagesBody(stream) : chatBody(stream)),
  });
  const text = await res.text();
  return { res, text, retrieved };
}

async function expectRetrievalHappened(format: 'messages' | 'chat', retrieved: string[]) {
  expect(mock!.requests).toHaveLength(2);
  const [first, second] = mock!.requests.map((r) => JSON.parse(r.body.toString()));
  const toolNames = (b: { tools?: Array<{ name?: string; function?: { name: string } }> }) =>
    (b.tools ?? []).map((t) => t.name ?? t.function?.name);
  expect(toolNames(first)).toEqual(['svc_retrieve']);
  expect(toolNames(second)).toEqual(['svc_retrieve']);
  // the continuation carries the retrieved original: the exact CCR entry
  const hash = hashIn(mock!.requests[0]!)!;
  const original = await svc!.server.ctx.ccr.get(hash);
  expect(original).toContain('needle_');
  const last = second.messages.at(-1);
  const content = format === 'messages' ? last.content[0].content : last.content;
  expect(content).toBe(original);
  // the continuation keeps the forwarded body as a byte-identical prefix
  const firstText = mock!.requests[0]!.body.toString();
  const secondText = mock!.requests[1]!.body.toString();
  const cut = firstText.indexOf('"messages"');
  expect(secondText.slice(0, cut)).toBe(firstText.slice(0, cut));
  await until(() => retrieved.length === 1);
  expect(retrieved).toEqual(['tool:true']);
}

describe('retrieval loop through the proxy', () => {
  for (const format of ['messages', 'chat'] as const) {
    it(`${format}, non-streaming: the client gets only the final answer`, async () => {
      const { res, text, retrieved } = await run(format, false);
      expect(res.status).toBe(200);
      const body = JSON.parse(text);
      expect(text).not.toContain('svc_retrieve');
      if (format === 'messages') expect(body.content).toEqual([{ type: 'text', text: ANSWER }]);
      else expect(body.choices[0].message.content).toBe(ANSWER);
      await expectRetrievalHappened(format, retrieved);
    });

    it(`${format}, streaming: the client gets one stream with only the final answer`, async () => {
      const { res, text, retrieved } = await run(format, true);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/event-stream');
      expect(text).not.toContain('svc_retrieve');
      expect(text).not.toContain('tool_use');
      expect(text).toContain(ANSWER);
      if (format === 'messages') {
        expect(text.match(/event: message_start/g)).toHaveLength(1);
        expect(text.match(/event: message_stop/g)).toHaveLength(1);
        const starts = [...text.matchAll(/"type":"content_block_start","index":(\d+)/g)].map((m) =>
          Number(m[1]),
        );
        expect(starts).toEqual([0, 1]);
        expect(text).toContain('"stop_reason":"end_turn"');
      } else {
        expect(text.match(/data: \[DONE\]/g)).toHaveLength(1);
        expect(text).not.toContain('tool_calls');
        expect(text).toContain('"finish_reason":"stop"');
        expect(text).not.toContain('chatcmpl-2');
      }
      await expectRetrievalHappened(format, retrieved);
    });
  }

  it('requests without a marker get no retrieval tool and are forwarded as they came', async () => {
    mock = await startMockUpstream((_req, res) => replyJson(res, 200, { ok: true }));
    svc = await startSvc({ flags: { 'messages-api-url': `${mock.url}/v1` } });
    const body = JSON.stringify({
      model: 'claude-sonnet-4-5',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'hi' }],
    });
    await fetch(`${svc.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(mock.requests[0]!.body.toString()).toBe(body);
  });

  it('adds the tool identically on consecutive requests (stable prefix)', async () => {
    mock = await startMockUpstream((_req, res) =>
      replyJson(res, 200, {
        id: 'm',
        type: 'message',
        role: 'assistant',
        content: [{ type: 'text', text: 'ok' }],
        stop_reason: 'end_turn',
        usage: { input_tokens: 1, output_tokens: 1 },
      }),
    );
    svc = await startSvc({
      // The response cache (guards) would answer the identical second request itself.
      flags: {
        'messages-api-url': `${mock.url}/v1`,
        'context-limit': 6000,
        'compress-first': false,
        cache: false,
      },
    });
    const body = messagesBody(false);
    for (let i = 0; i < 2; i += 1) {
      await fetch(`${svc.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    }
    const [a, b] = mock.requests.map((r) => r.body.toString());
    expect(a).toContain('"name":"svc_retrieve"');
    expect(b).toBe(a);
  });
});
