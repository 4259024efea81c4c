import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, type ModelMessage, streamText, wrapLanguageModel } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { compressionMiddleware, withCompression } from '../../packages/client/src/adapters/ai-sdk.js';
import type { CompressResult } from '../../packages/client/src/types.js';
import { LONG_LOG, LONG_TOOL_OUTPUT } from './fixtures.js';
import { closedPortUrl, type MockServer, squeeze, startSqueezingSvc } from './helpers.js';
import { startOpenAiUpstream } from './providers.js';

const SYSTEM = 'You are an agent.';
const MESSAGES: ModelMessage[] = [
  { role: 'user', content: 'List the files and read the log.' },
  {
    role: 'assistant',
    content: [
      { type: 'tool-call', toolCallId: 'call_1', toolName: 'list_files', input: { path: '.' } },
      { type: 'tool-call', toolCallId: 'call_2', toolName: 'read_log', input: { file: 'build.log' } },
    ],
  },
  {
    role: 'tool',
    content: [
      {
        type: 'tool-result',
        toolCallId: 'call_1',
        toolName: 'list_files',
        output: { type: 'json', value: JSON.parse(LONG_TOOL_OUTPUT) },
      },
      {
        type: 'tool-result',
        toolCallId: 'call_2',
        toolName: 'read_log',
        output: { type: 'text', value: LONG_LOG },
      },
    ],
  },
  { role: 'user', content: 'Summarise both.' },
];

/** What the chat-completions provider sends upstream for MESSAGES, with the tool outputs as given. */
function upstreamMessages(list: string, log: string) {
  return [
    { role: 'system', content: 'You are an agent.' },
    { role: 'user', content: 'List the files and read the log.' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'list_files', arguments: '{"path":"."}' } },
        { id: 'call_2', type: 'function', function: { name: 'read_log', arguments: '{"file":"build.log"}' } },
      ],
    },
    { role: 'tool', tool_call_id: 'call_1', content: list },
    { role: 'tool', tool_call_id: 'call_2', content: log },
    { role: 'user', content: 'Summarise both.' },
  ];
}

const servers: MockServer[] = [];
async function track(p: Promise<MockServer>) {
  const s = await p;
  servers.push(s);
  return s;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

function providerModel(upstream: MockServer) {
  return createOpenAICompatible({
    name: 'mock',
    baseURL: `${upstream.url}/v1`,
    apiKey: 'sk-provider',
  }).chatModel('mock-model');
}

describe('AI SDK middleware and withCompression(model)', () => {
  it('generateText: the provider receives the compressed prompt', async () => {
    const [svc, upstream] = [await track(startSqueezingSvc()), await track(startOpenAiUpstream())];
    const results: CompressResult[] = [];
    const model = withCompression(providerModel(upstream), {
      baseUrl: svc.url,
      onResult: (r) => results.push(r),
    });
    const { text } = await generateText({ model, system: SYSTEM, messages: MESSAGES, maxRetries: 0 });
    expect(text).toBe('Hello');
    const sent = svc.received[0]!.json as {
      model: string;
      messages: Array<{ role: string; content: unknown }>;
    };
    expect(sent.model).toBe('mock-model');
    expect(sent.messages.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual([
      LONG_TOOL_OUTPUT,
      LONG_LOG,
    ]);
    const body = upstream.received[0]!.json as { messages: unknown };
    expect(body.messages).toEqual(upstreamMessages(squeeze(LONG_TOOL_OUTPUT), squeeze(LONG_LOG)));
    expect(results.map((r) => r.compressed)).toEqual([true]);
  });

  it('streamText: the provider receives the compressed prompt', async () => {
    const [svc, upstream] = [await track(startSqueezingSvc()), await track(startOpenAiUpstream())];
    const model = wrapLanguageModel({
      model: providerModel(upstream),
      middleware: compressionMiddleware({ baseUrl: svc.url }),
    });
    const result = streamText({ model, system: SYSTEM, messages: MESSAGES, maxRetries: 0 });
    let text = '';
    for await (const delta of result.textStream) text += delta;
    expect(text).toBe('Hello');
    expect(svc.received).toHaveLength(1);
    const body = upstream.received[0]!.json as { messages: unknown; stream: boolean };
    expect(body.stream).toBe(true);
    expect(body.messages).toEqual(upstreamMessages(squeeze(LONG_TOOL_OUTPUT), squeeze(LONG_LOG)));
  });

  it('svc down: the provider receives the prompt as it was', async () => {
    const upstream = await track(startOpenAiUpstream());
    const results: CompressResult[] = [];
    const model = withCompression(providerModel(upstream), {
      baseUrl: await closedPortUrl(),
      retries: 0,
      onResult: (r) => results.push(r),
    });
    await generateText({ model, system: SYSTEM, messages: MESSAGES, maxRetries: 0 });
    const body = upstream.received[0]!.json as { messages: unknown };
    expect(body.messages).toEqual(upstreamMessages(LONG_TOOL_OUTPUT, LONG_LOG));
    expect(results[0]).toMatchObject({ compressed: false });
  });
});
