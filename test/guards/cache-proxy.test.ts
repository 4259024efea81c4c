import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { type MockUpstream, replyJson, startMockUpstream, until } from '../server/helpers.js';
import {
  CHAT_REPLY,
  CHAT_SSE,
  MESSAGES_REPLY,
  MESSAGES_SSE,
  startSse,
  writeEvents,
} from '../server/sse-mocks.js';
import { type GuardedSvc, startGuardedSvc, testClock } from './helpers.js';

let svc: GuardedSvc | undefined;
let upstream: MockUpstream | undefined;
afterEach(async () => {
  await svc?.close();
  await upstream?.close();
  svc = upstream = undefined;
});

/** A mock upstream for both formats: JSON or SSE as the request asks; `fail` answers 500. */
async function setup(
  flags: Record<string, unknown> = {},
  options: { now?: () => number; fail?: () => boolean } = {},
) {
  upstream = await startMockUpstream(async (req, res) => {
    const body = JSON.parse(req.body.toString());
    const chat = req.url.startsWith('/v1/chat/completions');
    if (options.fail?.()) {
      replyJson(res, 500, { type: 'error', error: { type: 'api_error', message: 'upstream broke' } });
      return;
    }
    if (body.stream) {
      startSse(res);
      await writeEvents(res, chat ? CHAT_SSE : MESSAGES_SSE, () => new Promise((r) => setImmediate(r)));
    } else
      replyJson(res, 200, chat ? CHAT_REPLY : MESSAGES_REPLY, {
        'request-id': `req_${upstream!.requests.length}`,
      });
  });
  svc = await startGuardedSvc({
    flags: { 'messages-api-url': `${upstream.url}/v1`, 'compat-api-url': `${upstream.url}/v1`, ...flags },
    ...(options.now ? { now: options.now } : {}),
  });
  return { svc, upstream };
}

const HEADERS = {
  'content-type': 'application/json',
  'x-api-key': 'sk-ant-1',
  'anthropic-version': '2023-06-01',
};
const BODY = {
  model: 'claude-sonnet-4-5',
  max_tokens: 100,
  system: 'You are terse.',
  temperature: 0,
  tools: [{ name: 'grep', description: 'search', input_schema: { type: 'object', properties: {} } }],
  messages: [{ role: 'user', content: 'Why does the build fail?' }],
};

function post(body: unknown, headers: Record<string, string> = HEADERS, path = '/v1/messages') {
  return fetch(`${svc!.url}${path}`, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

async function stats() {
  return (await (await fetch(`${svc!.url}/stats`)).json()) as {
    requests: { total: number; cached: number };
    cache: { entries: number; total_hits: number };
    budget: { daily: { spend: number } };
  };
}

describe('response cache in the proxy', () => {
  it('answers a repeated request from the cache without calling the upstream', async () => {
    await setup();
    const first = await post(BODY);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-service-cache')).toBe('MISS');
    const firstBody = await first.text();
    await until(() => svc!.events.length === 1);

    // Same request, other key order and whitespace: the same entry.
    const reordered = `{ "messages": [ {"content": "Why does the build fail?", "role": "user"} ],
      "tools": ${JSON.stringify(BODY.tools)}, "temperature": 0, "system": "You are terse.",
      "max_tokens": 100, "model": "claude-sonnet-4-5" }`;
    for (const body of [BODY, reordered]) {
      const again = await post(body);
      expect(again.status).toBe(200);
      expect(again.headers.get('x-service-cache')).toBe('HIT');
      expect(again.headers.get('content-type')).toBe('application/json');
      expect(again.headers.get('request-id')).toBeNull(); // describes the original call, not replayed
      expect(await again.text()).toBe(firstBody);
    }
    expect(upstream!.requests).toHaveLength(1);
    await until(() => svc!.events.length === 3);
    expect(svc!.events.map((e) => [e.mode, e.cached])).toEqual([
      ['optimize', false],
      ['cached', true],
      ['cached', true],
    ]);
    const s = await stats();
    expect(s.requests).toMatchObject({ total: 3, cached: 2 });
    expect(s.cache).toMatchObject({ entries: 1, total_hits: 2 });
    const metrics = await (await fetch(`${svc!.url}/metrics`)).text();
    expect(metrics).toMatch(/^service_cache_hits_total 2$/m);
    expect(metrics).toMatch(/^service_cache_misses_total 1$/m);
  });

  it.each([
    ['temperature', { temperature: 0.7 }],
    ['tool list', { tools: [{ name: 'ls', input_schema: { type: 'object' } }] }],
    ['system prompt', { system: 'You are verbose.' }],
    ['model', { model: 'claude-haiku-4-5' }],
    ['max_tokens', { max_tokens: 101 }],
  ])('a different %s is a MISS', async (_name, change) => {
    await setup();
    expect((await post(BODY)).headers.get('x-service-cache')).toBe('MISS');
    const other = await post({ ...BODY, ...change });
    expect(other.headers.get('x-service-cache')).toBe('MISS');
    expect(upstream!.requests).toHaveLength(2);
    expect((await post({ ...BODY, ...change })).headers.get('x-service-cache')).toBe('HIT');
    expect(upstream!.requests).toHaveLength(2);
  });

  it('keeps API keys apart', async () => {
    await setup();
    await post(BODY);
    const other = await post(BODY, { ...HEADERS, 'x-api-key': 'sk-ant-2' });
    expect(other.headers.get('x-service-cache')).toBe('MISS');
    expect(upstream!.requests).toHaveLength(2);
  });

  it('expires entries after --cache-ttl (injected clock)', async () => {
    const clock = testClock(Date.parse('2025-05-01T00:00:00Z'));
    await setup({ 'cache-ttl': 60 }, { now: clock.now });
    await post(BODY);
    clock.advance(59_000);
    expect((await post(BODY)).headers.get('x-service-cache')).toBe('HIT');
    clock.advance(2_000);
    expect((await post(BODY)).headers.get('x-service-cache')).toBe('MISS');
    expect(upstream!.requests).toHaveLength(2);
  });

  it('evicts the least recently used entry past --cache-max-entries', async () => {
    await setup({ 'cache-max-entries': 2 });
    const ask = (q: string) => post({ ...BODY, messages: [{ role: 'user', content: q }] });
    await ask('a');
    await ask('b');
    expect((await ask('a')).headers.get('x-service-cache')).toBe('HIT'); // a is now the most recent
    await ask('c'); // evicts b, the least recently used
    expect((await ask('b')).headers.get('x-service-cache')).toBe('MISS'); // stored again, evicting a
    expect((await ask('c')).headers.get('x-service-cache')).toBe('HIT');
    expect((await stats()).cache.entries).toBe(2);
    expect(upstream!.requests).toHaveLength(4);
  });

  it('replays a cached messages stream as SSE that the Anthropic client parses', async () => {
    await setup();
    const client = new Anthropic({ apiKey: 'sk-ant-1', baseURL: svc!.url, maxRetries: 0 });
    const params = { ...BODY, stream: true as const } as unknown as Anthropic.MessageCreateParamsStreaming;
    const live = await client.messages
      .stream(params as unknown as Anthropic.MessageStreamParams)
      .finalMessage();
    await until(() => svc!.events.length === 1);
    const { data: replayStream, response } = await client.messages.create(params).withResponse();
    expect(response.headers.get('x-service-cache')).toBe('HIT');
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const types: string[] = [];
    let text = '';
    for await (const event of replayStream) {
      types.push(event.type);
      if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
    }
    expect(text).toBe('Fixed it.');
    expect(types.at(-1)).toBe('message_stop');
    const replayed = await client.messages
      .stream(params as unknown as Anthropic.MessageStreamParams)
      .finalMessage();
    expect(replayed).toEqual(live);
    expect(upstream!.requests).toHaveLength(1);
    // The non-streaming form of the same request has its own entry.
    expect((await post(BODY)).headers.get('x-service-cache')).toBe('MISS');
  });

  it('replays a cached chat stream as SSE that the OpenAI client parses', async () => {
    await setup();
    const client = new OpenAI({ apiKey: 'sk-openai-1', baseURL: `${svc!.url}/v1`, maxRetries: 0 });
    const params = {
      model: 'gpt-4o',
      messages: [{ role: 'user' as const, content: 'why?' }],
      stream: true as const,
      stream_options: { include_usage: true },
    };
    const collect = async () => {
      const { data: stream, response } = await client.chat.completions.create(params).withResponse();
      let text = '';
      let usage: unknown;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? '';
        if (chunk.usage) usage = chunk.usage;
      }
      return { text, usage, cache: response.headers.get('x-service-cache') };
    };
    const live = await collect();
    await until(() => svc!.events.length === 1);
    const replay = await collect();
    expect(live).toMatchObject({ text: 'A timeout.', cache: 'MISS' });
    expect(replay).toEqual({ ...live, cache: 'HIT' });
    expect(upstream!.requests).toHaveLength(1);
  });

  it('does not cache a stream that ended without its final event', async () => {
    upstream = await startMockUpstream(async (_req, res) => {
      startSse(res);
      await writeEvents(res, MESSAGES_SSE.slice(0, -1));
    });
    svc = await startGuardedSvc({ flags: { 'messages-api-url': `${upstream.url}/v1` } });
    for (let i = 0; i < 2; i++) {
      const res = await post({ ...BODY, stream: true });
      expect(res.headers.get('x-service-cache')).toBe('MISS');
      await res.text();
      await until(() => svc!.events.length === i + 1);
    }
    expect(upstream.requests).toHaveLength(2);
    expect((await stats()).cache.entries).toBe(0);
  });

  it('never caches an upstream error', async () => {
    let failing = true;
    await setup({}, { fail: () => failing });
    expect((await post(BODY)).status).toBe(500);
    await until(() => svc!.events.length === 1);
    failing = false;
    const ok = await post(BODY);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('x-service-cache')).toBe('MISS');
    expect(upstream!.requests).toHaveLength(2);
  });

  it('tells the cache outcome on an upstream error relayed and on an error svc answers itself', async () => {
    await setup({}, { fail: () => true });
    const relayed = await post(BODY);
    expect(relayed.status).toBe(500);
    expect(relayed.headers.get('x-service-cache')).toBe('MISS');
    // the upstream gone: svc's own 502, after the lookup
    await new Promise<void>((resolve) => upstream!.server.close(() => resolve()));
    upstream!.server.closeAllConnections();
    const own = await post({ ...BODY, max_tokens: 99 });
    expect(own.status).toBe(502);
    expect(own.headers.get('x-svc-error')).toBe('SVC_UPSTREAM_UNREACHABLE');
    expect(own.headers.get('x-service-cache')).toBe('MISS');
  });

  it('skips the cache with the x-service-cache: bypass request header', async () => {
    await setup();
    await post(BODY);
    await until(() => svc!.events.length === 1);
    const bypass = await post(BODY, { ...HEADERS, 'x-service-cache': 'bypass' });
    expect(bypass.headers.get('x-service-cache')).toBe('BYPASS');
    expect(upstream!.requests).toHaveLength(2);
    expect(upstream!.requests[1]!.headers['x-service-cache']).toBeUndefined(); // svc's own header stays here
    expect((await post(BODY)).headers.get('x-service-cache')).toBe('HIT');
  });

  it('is off with --no-cache', async () => {
    await setup({ cache: false });
    for (let i = 0; i < 3; i++) expect((await post(BODY)).headers.get('x-service-cache')).toBe('BYPASS');
    expect(upstream!.requests).toHaveLength(3);
    const s = await stats();
    expect(s.requests.cached).toBe(0);
    expect(s.cache).toMatchObject({ entries: 0, total_hits: 0 });
  });

  it('charges nothing to the budget for a hit', async () => {
    await setup({ budget: 100 });
    await post(BODY);
    await until(() => svc!.events.length === 1);
    const spent = (await stats()).budget.daily.spend;
    expect(spent).toBeGreaterThan(0);
    await post(BODY);
    await until(() => svc!.events.length === 2);
    expect(svc!.events[1]!.costUsd).toBe(0);
    expect((await stats()).budget.daily.spend).toBe(spent);
  });
});
