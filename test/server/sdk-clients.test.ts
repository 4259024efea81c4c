import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFakeCompress } from './fake-engine.js';
import {
  longText,
  type MockUpstream,
  replyJson,
  startMockUpstream,
  startSvc,
  type TestSvc,
  until,
} from './helpers.js';
import { CHAT_REPLY, CHAT_SSE, MESSAGES_REPLY, MESSAGES_SSE, startSse, writeEvents } from './sse-mocks.js';

let svc: TestSvc;
let upstream: MockUpstream;

beforeAll(async () => {
  upstream = await startMockUpstream(async (req, res) => {
    const body = JSON.parse(req.body.toString());
    const chat = req.url.startsWith('/v1/chat/completions');
    if (body.stream) {
      startSse(res);
      await writeEvents(res, chat ? CHAT_SSE : MESSAGES_SSE, () => new Promise((r) => setImmediate(r)));
    } else replyJson(res, 200, chat ? CHAT_REPLY : MESSAGES_REPLY);
  });
  svc = await startSvc({
    compress: createFakeCompress(),
    flags: { 'messages-api-url': `${upstream.url}/v1`, 'compat-api-url': `${upstream.url}/v1` },
  });
});

afterAll(async () => {
  await svc.close();
  await upstream.close();
});

const TOOL_OUTPUT = longText('tool');

describe('official SDKs pointed at svc by base URL', () => {
  const openai = () => new OpenAI({ apiKey: 'sk-openai-test', baseURL: `${svc.url}/v1`, maxRetries: 0 });
  const anthropic = () => new Anthropic({ apiKey: 'sk-ant-test', baseURL: svc.url, maxRetries: 0 });
  const chatMessages: OpenAI.Chat.ChatCompletionMessageParam[] = [
    { role: 'user', content: 'read it' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read', arguments: '{}' } }],
    },
    { role: 'tool', tool_call_id: 'c1', content: TOOL_OUTPUT },
    { role: 'user', content: 'summary?' },
  ];
  const anthropicMessages: Anthropic.MessageParam[] = [
    { role: 'user', content: 'read it' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'read', input: {} }] },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 't1', content: TOOL_OUTPUT },
        { type: 'text', text: 'summary?' },
      ],
    },
  ];

  it('openai: chat.completions.create', async () => {
    const before = upstream.requests.length;
    const completion = await openai().chat.completions.create({ model: 'gpt-4o', messages: chatMessages });
    expect(completion.choices[0]!.message.content).toBe('A timeout.');
    expect(completion.usage?.prompt_tokens).toBe(300);
    const sent = JSON.parse(upstream.requests[before]!.body.toString());
    expect(sent.messages[2].content).toMatch(/^FAKEtool line/);
    expect(upstream.requests[before]!.headers.authorization).toBe('Bearer sk-openai-test');
  });

  it('openai: streaming', async () => {
    const stream = await openai().chat.completions.create({
      model: 'gpt-4o',
      messages: chatMessages,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('A timeout.');
    expect(usage?.completion_tokens).toBe(4);
  });

  it('anthropic: messages.create', async () => {
    const before = upstream.requests.length;
    const message = await anthropic().messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 1024,
      messages: anthropicMessages,
    });
    expect(message.content).toEqual([{ type: 'text', text: 'Fixed it.' }]);
    expect(message.usage.input_tokens).toBe(120);
    const got = upstream.requests[before]!;
    // this SDK version sends the key as a bearer token; older ones as x-api-key: either reaches the upstream
    expect(got.headers['x-api-key'] ?? got.headers.authorization).toMatch(/sk-ant-test/);
    expect(got.headers['anthropic-version']).toBeTypeOf('string');
    expect(JSON.parse(got.body.toString()).messages[2].content[0].content).toMatch(/^FAKEtool line/);
  });

  it('anthropic: streaming', async () => {
    const before = svc.events.length;
    const stream = anthropic().messages.stream({
      model: 'claude-sonnet-4-5',
      max_tokens: 1024,
      messages: anthropicMessages,
    });
    let text = '';
    stream.on('text', (t) => {
      text += t;
    });
    const final = await stream.finalMessage();
    expect(text).toBe('Fixed it.');
    expect(final.usage.output_tokens).toBe(9);
    await until(() => svc.events.length > before);
    expect(svc.events.at(-1)).toMatchObject({ stream: true, usage: { input: 120, output: 9 } });
  });
});
