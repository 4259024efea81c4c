import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { withCompression } from '../../packages/client/src/adapters/openai.js';
import { SvcAuthError, SvcConnectionError } from '../../packages/client/src/index.js';
import type { CompressResult } from '../../packages/client/src/types.js';
import { LONG_LOG, LONG_TOOL_OUTPUT } from './fixtures.js';
import {
  closedPortUrl,
  type MockServer,
  sendJson,
  squeeze,
  startMock,
  startSqueezingSvc,
} from './helpers.js';
import { startOpenAiUpstream } from './providers.js';

const MESSAGES = [
  { role: 'system' as const, content: 'You are an agent.' },
  { role: 'user' as const, content: [{ type: 'text' as const, text: 'List files and read the log.' }] },
  {
    role: 'assistant' as const,
    content: null,
    tool_calls: [
      { id: 'call_1', type: 'function' as const, function: { name: 'ls', arguments: '{}' } },
      { id: 'call_2', type: 'function' as const, function: { name: 'cat', arguments: '{"f":"build.log"}' } },
    ],
  },
  { role: 'tool' as const, tool_call_id: 'call_1', content: LONG_TOOL_OUTPUT },
  { role: 'tool' as const, tool_call_id: 'call_2', content: LONG_LOG },
  { role: 'user' as const, content: 'Summarise.' },
];
const SQUEEZED = MESSAGES.map((m) => (m.role === 'tool' ? { ...m, content: squeeze(m.content) } : m));

const servers: MockServer[] = [];
async function track(p: Promise<MockServer>) {
  const s = await p;
  servers.push(s);
  return s;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

function openai(upstream: MockServer) {
  return new OpenAI({ apiKey: 'sk-provider', baseURL: `${upstream.url}/v1`, maxRetries: 0 });
}

describe('OpenAI withCompression(client)', () => {
  it('create (non-streaming): the upstream receives the compressed conversation', async () => {
    const [svc, upstream] = [await track(startSqueezingSvc()), await track(startOpenAiUpstream())];
    const results: CompressResult[] = [];
    const client = withCompression(openai(upstream), { baseUrl: svc.url, onResult: (r) => results.push(r) });
    const completion = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: MESSAGES,
      temperature: 0,
    });
    expect(completion.choices[0]!.message.content).toBe('Hello');
    expect(svc.received[0]!.json).toEqual({ messages: MESSAGES, model: 'gpt-4o' });
    expect(upstream.received).toHaveLength(1);
    expect(upstream.received[0]!.json).toEqual({ model: 'gpt-4o', messages: SQUEEZED, temperature: 0 });
    expect(upstream.received[0]!.headers.authorization).toBe('Bearer sk-provider');
    expect(results.map((r) => [r.compressed, r.tokensSaved])).toEqual([[true, 60]]);
  });

  it('create (streaming): chunks arrive and the upstream received the compressed conversation', async () => {
    const [svc, upstream] = [await track(startSqueezingSvc()), await track(startOpenAiUpstream())];
    const client = withCompression(openai(upstream), { baseUrl: svc.url });
    const stream = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: MESSAGES,
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('Hello');
    expect(upstream.received[0]!.json).toEqual({ model: 'gpt-4o', messages: SQUEEZED, stream: true });
  });

  it('keeps withResponse() of the SDK promise', async () => {
    const [svc, upstream] = [await track(startSqueezingSvc()), await track(startOpenAiUpstream())];
    const client = withCompression(openai(upstream), { baseUrl: svc.url });
    const { data, response } = await client.chat.completions
      .create({ model: 'gpt-4o', messages: MESSAGES })
      .withResponse();
    expect(response.status).toBe(200);
    expect(data.choices[0]!.message.content).toBe('Hello');
    expect((upstream.received[0]!.json as { messages: unknown }).messages).toEqual(SQUEEZED);
  });

  it('other methods pass through untouched and never call svc', async () => {
    const [svc, upstream] = [await track(startSqueezingSvc()), await track(startOpenAiUpstream())];
    const raw = openai(upstream);
    const client = withCompression(raw, { baseUrl: svc.url });
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual(['gpt-4o']);
    await client.responses.create({ model: 'gpt-4o', input: LONG_LOG });
    expect(upstream.received.map((r) => `${r.method} ${r.url}`)).toEqual([
      'GET /v1/models',
      'POST /v1/responses',
    ]);
    expect(upstream.received[1]!.json).toEqual({ model: 'gpt-4o', input: LONG_LOG });
    expect(svc.received).toHaveLength(0);
    // Same resources, same configuration; the client passed in is not modified.
    expect(client.models).toBe(raw.models);
    expect(client.baseURL).toBe(raw.baseURL);
    expect(client.chat.completions.retrieve).toBe(raw.chat.completions.retrieve);
    await raw.chat.completions.create({ model: 'gpt-4o', messages: MESSAGES });
    expect((upstream.received[2]!.json as { messages: unknown }).messages).toEqual(MESSAGES);
    expect(svc.received).toHaveLength(0);
  });

  it('falls back to the original messages when svc is down, or throws with fallback off', async () => {
    const upstream = await track(startOpenAiUpstream());
    const results: CompressResult[] = [];
    const down = await closedPortUrl();
    const client = withCompression(openai(upstream), {
      baseUrl: down,
      retries: 0,
      onResult: (r) => results.push(r),
    });
    await client.chat.completions.create({ model: 'gpt-4o', messages: MESSAGES });
    expect((upstream.received[0]!.json as { messages: unknown }).messages).toEqual(MESSAGES);
    expect(results[0]).toMatchObject({ compressed: false });
    expect(results[0]!.error).toBeInstanceOf(SvcConnectionError);

    const strict = withCompression(openai(upstream), { baseUrl: down, retries: 0, fallback: false });
    await expect(
      strict.chat.completions.create({ model: 'gpt-4o', messages: MESSAGES }),
    ).rejects.toBeInstanceOf(SvcConnectionError);
    expect(upstream.received).toHaveLength(1);
  });

  it('a 401 from svc rejects the call (even with fallback on) and nothing goes upstream', async () => {
    const upstream = await track(startOpenAiUpstream());
    const svc = await track(startMock((_req, res) => sendJson(res, 401, { error: { message: 'bad key' } })));
    const client = withCompression(openai(upstream), { baseUrl: svc.url, apiKey: 'svc-key' });
    await expect(
      client.chat.completions.create({ model: 'gpt-4o', messages: MESSAGES }),
    ).rejects.toBeInstanceOf(SvcAuthError);
    expect(svc.received[0]!.headers.authorization).toBe('Bearer svc-key');
    expect(upstream.received).toHaveLength(0);
  });
});
