import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { withCompression } from '../../packages/client/src/adapters/anthropic.js';
import { anthropicView } from '../../packages/client/src/convert-anthropic.js';
import { SvcClientError, SvcCompressError } from '../../packages/client/src/index.js';
import { viewMessages } from '../../packages/client/src/splice.js';
import type { CompressResult } from '../../packages/client/src/types.js';
import { anthropicRequest, LONG_LOG, LONG_TOOL_OUTPUT } from './fixtures.js';
import { type MockServer, sendJson, squeeze, startMock, startSqueezingSvc, wireResult } from './helpers.js';
import { startAnthropicUpstream } from './providers.js';

type Body = ReturnType<typeof anthropicRequest>;

const servers: MockServer[] = [];
async function track(p: Promise<MockServer>) {
  const s = await p;
  servers.push(s);
  return s;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

function anthropic(upstream: MockServer) {
  return new Anthropic({ apiKey: 'sk-ant-provider', baseURL: upstream.url, maxRetries: 0 });
}

/** The request with both tool results squeezed, everything else as it was. */
function squeezedRequest(): Body {
  const expected = anthropicRequest();
  const blocks = expected.messages[2]!.content as Array<Record<string, unknown>>;
  blocks[0]!.content = squeeze(LONG_TOOL_OUTPUT);
  (blocks[1]!.content as Array<Record<string, unknown>>)[0]!.text = squeeze(LONG_LOG);
  return expected;
}

/** A svc that answers with the messages it got: nothing compressed. */
function startEchoSvc() {
  return startMock((req, res) =>
    sendJson(res, 200, wireResult((req.json as { messages: unknown[] }).messages)),
  );
}

describe('Anthropic withCompression(client)', () => {
  it('messages.create (non-streaming): the upstream receives the compressed conversation, blocks intact', async () => {
    const [svc, upstream] = [await track(startSqueezingSvc()), await track(startAnthropicUpstream())];
    const results: CompressResult[] = [];
    const client = withCompression(anthropic(upstream), {
      baseUrl: svc.url,
      onResult: (r) => results.push(r),
    });
    const message = await client.messages.create(anthropicRequest() as never);
    expect((message as { content: Array<{ text: string }> }).content[0]!.text).toBe('Hello');
    const request = anthropicRequest();
    expect(svc.received[0]!.json).toEqual({
      messages: viewMessages(anthropicView(request)),
      model: 'claude-test-1',
    });
    expect(upstream.received).toHaveLength(1);
    expect(upstream.received[0]!.json).toEqual(squeezedRequest());
    // Byte-faithful: exactly what the SDK would send for the squeezed request itself.
    expect(upstream.received[0]!.body).toBe(JSON.stringify(squeezedRequest()));
    expect(upstream.received[0]!.headers.authorization).toBe('Bearer sk-ant-provider');
    expect(results).toHaveLength(1);
    expect(results[0]!.compressed).toBe(true);
  });

  it('a conversation with images, thinking and cache_control round-trips byte for byte when nothing is compressed', async () => {
    const [svc, upstream] = [await track(startEchoSvc()), await track(startAnthropicUpstream())];
    const client = withCompression(anthropic(upstream), { baseUrl: svc.url });
    await client.messages.create(anthropicRequest() as never);
    expect(svc.received).toHaveLength(1);
    expect(upstream.received[0]!.body).toBe(JSON.stringify(anthropicRequest()));
  });

  it('messages.create (streaming): events arrive and the upstream received the compressed conversation', async () => {
    const [svc, upstream] = [await track(startSqueezingSvc()), await track(startAnthropicUpstream())];
    const client = withCompression(anthropic(upstream), { baseUrl: svc.url });
    const stream = await client.messages.create({ ...anthropicRequest(), stream: true } as never);
    let text = '';
    for await (const event of stream as unknown as AsyncIterable<{
      type: string;
      delta?: { text?: string };
    }>) {
      if (event.type === 'content_block_delta') text += event.delta?.text ?? '';
    }
    expect(text).toBe('Hello');
    expect(upstream.received[0]!.json).toEqual({ ...squeezedRequest(), stream: true });
  });

  it('messages.stream() goes through the intercepted create', async () => {
    const [svc, upstream] = [await track(startSqueezingSvc()), await track(startAnthropicUpstream())];
    const client = withCompression(anthropic(upstream), { baseUrl: svc.url });
    const final = await client.messages.stream(anthropicRequest() as never).finalMessage();
    expect(final.content[0]).toMatchObject({ type: 'text', text: 'Hello' });
    expect(svc.received).toHaveLength(1);
    expect(upstream.received[0]!.json).toEqual({ ...squeezedRequest(), stream: true });
  });

  it('other methods pass through untouched and never call svc', async () => {
    const [svc, upstream] = [await track(startSqueezingSvc()), await track(startAnthropicUpstream())];
    const raw = anthropic(upstream);
    const client = withCompression(raw, { baseUrl: svc.url });
    const { messages, model } = anthropicRequest();
    const count = await client.messages.countTokens({ messages, model } as never);
    expect(count.input_tokens).toBe(42);
    await client.models.list();
    expect(upstream.received.map((r) => `${r.method} ${r.url.split('?')[0]}`)).toEqual([
      'POST /v1/messages/count_tokens',
      'GET /v1/models',
    ]);
    expect(upstream.received[0]!.json).toEqual({ messages, model });
    expect(svc.received).toHaveLength(0);
    expect(client.models).toBe(raw.models);
    expect(client.messages.batches).toBe(raw.messages.batches);
    // The client passed in is not modified.
    await raw.messages.create(anthropicRequest() as never);
    expect(upstream.received[2]!.body).toBe(JSON.stringify(anthropicRequest()));
    expect(svc.received).toHaveLength(0);
  });

  it('keeps the original request when the result does not line up, and says why', async () => {
    const upstream = await track(startAnthropicUpstream());
    // A svc that loses a message: the result cannot be mapped back.
    const svc = await track(
      startMock((req, res) =>
        sendJson(res, 200, wireResult((req.json as { messages: unknown[] }).messages.slice(1))),
      ),
    );
    const results: CompressResult[] = [];
    const client = withCompression(anthropic(upstream), {
      baseUrl: svc.url,
      onResult: (r) => results.push(r),
    });
    await client.messages.create(anthropicRequest() as never);
    expect(upstream.received[0]!.body).toBe(JSON.stringify(anthropicRequest()));
    expect(results[0]).toMatchObject({ compressed: false });
    expect(results[0]!.error).toMatchObject({ code: 'SVC_CLIENT_SPLICE' });

    const strict = withCompression(anthropic(upstream), { baseUrl: svc.url, fallback: false });
    const err = await strict.messages.create(anthropicRequest() as never).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SvcClientError);
    expect(upstream.received).toHaveLength(1);
  });

  it('a 400 from svc rejects the call even with fallback on', async () => {
    const upstream = await track(startAnthropicUpstream());
    const svc = await track(
      startMock((_req, res) => sendJson(res, 400, { error: { message: 'model is required' } })),
    );
    const client = withCompression(anthropic(upstream), { baseUrl: svc.url });
    const err = await client.messages.create(anthropicRequest() as never).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SvcCompressError);
    expect(err).toMatchObject({ status: 400, serverMessage: 'model is required' });
    expect(upstream.received).toHaveLength(0);
  });
});
