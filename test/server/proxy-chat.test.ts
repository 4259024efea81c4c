import { afterEach, describe, expect, it } from 'vitest';
import { chatBody } from '../formats/bodies.js';
import { createFakeCompress } from './fake-engine.js';
import { type MockUpstream, replyJson, startMockUpstream, startSvc, type TestSvc, until } from './helpers.js';
import { CHAT_REPLY, CHAT_SSE, startSse, writeEvents } from './sse-mocks.js';

let svc: TestSvc | undefined;
let upstream: MockUpstream | undefined;
afterEach(async () => {
  await svc?.close();
  await upstream?.close();
  svc = upstream = undefined;
});

const HEADERS = {
  'content-type': 'application/json',
  authorization: 'Bearer sk-openai-test',
  'openai-organization': 'org-1',
};

async function setup(
  options: import('./helpers.js').StartSvcOptions,
  handler: Parameters<typeof startMockUpstream>[0],
) {
  upstream = await startMockUpstream(handler);
  svc = await startSvc({ ...options, flags: { 'compat-api-url': `${upstream.url}/v1`, ...options.flags } });
}

function post(body: string, headers: Record<string, string> = HEADERS) {
  return fetch(`${svc!.url}/v1/chat/completions`, { method: 'POST', headers, body });
}

const TEXT = JSON.stringify(chatBody());

describe('/v1/chat/completions (chat format)', () => {
  it('compresses the tool message only; tool_calls and parts keep their bytes; usage read', async () => {
    await setup({ compress: createFakeCompress() }, (_r, res) => replyJson(res, 200, CHAT_REPLY));
    const res = await post(TEXT);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(CHAT_REPLY);
    const got = upstream!.requests[0]!;
    expect(got.url).toBe('/v1/chat/completions');
    expect(got.headers).toMatchObject({
      authorization: 'Bearer sk-openai-test',
      'openai-organization': 'org-1',
    });
    // a conversation without tools gets no tools member for a compression marker (its prefix stays cacheable)
    const sent = got.body.toString();
    expect(sent).not.toContain('"tools"');
    const strip = (s: string) => s.replace(/"content":"(app log|FAKE)[^"]*"/, '');
    expect(strip(sent)).toBe(strip(TEXT));
    const body = JSON.parse(sent);
    expect(body.messages[3].content).toMatch(/^FAKEapp log/);
    // the tool call and its result stay paired
    expect(body.messages[2].tool_calls[0].id).toBe('call_1');
    expect(body.messages[3].tool_call_id).toBe('call_1');
    await until(() => svc!.events.length === 1);
    expect(svc!.events[0]).toMatchObject({
      format: 'chat',
      model: 'gpt-4o',
      usage: { input: 100, output: 4, cacheRead: 200, cacheWrite: 0 },
    });
  });

  it('streams chunk by chunk and reads the final usage chunk', async () => {
    let release: (() => void) | undefined;
    await setup({ compress: createFakeCompress() }, (_r, res) => {
      startSse(res);
      void writeEvents(res, CHAT_SSE, (i) =>
        i === 1 ? new Promise<void>((r) => (release = r)) : Promise.resolve(),
      );
    });
    const res = await post(JSON.stringify(chatBody({ stream: true })));
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!text.includes('"A "')) text += decoder.decode((await reader.read()).value, { stream: true });
    expect(text).toBe(CHAT_SSE[0]! + CHAT_SSE[1]!);
    release!();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    expect(text).toBe(CHAT_SSE.join(''));
    await until(() => svc!.events.length === 1);
    expect(svc!.events[0]).toMatchObject({
      stream: true,
      usage: { input: 300, output: 4, cacheRead: 0, cacheWrite: 0 },
    });
  });

  it('a chat stream without a usage chunk has unknown usage, not zero', async () => {
    await setup({ compress: createFakeCompress() }, (_r, res) => {
      startSse(res);
      void writeEvents(res, [...CHAT_SSE.slice(0, 4), CHAT_SSE[5]!]);
    });
    const res = await post(JSON.stringify({ ...chatBody(), stream: true }));
    await res.text();
    await until(() => svc!.events.length === 1);
    expect(svc!.events[0]!.usage).toBeUndefined();
  });

  it('with the real engine: the request stays a valid chat request with its tool pairs and last message intact', async () => {
    await setup({}, (_r, res) => replyJson(res, 200, CHAT_REPLY));
    const res = await post(TEXT);
    expect(res.status).toBe(200);
    const body = JSON.parse(upstream!.requests[0]!.body.toString());
    const original = JSON.parse(TEXT);
    expect(body.messages.at(-1)).toEqual(original.messages.at(-1));
    expect(body.messages[0]).toEqual(original.messages[0]);
    const callIds = body.messages.flatMap((m: { tool_calls?: Array<{ id: string }> }) =>
      (m.tool_calls ?? []).map((c) => c.id),
    );
    const resultIds = body.messages
      .filter((m: { role: string }) => m.role === 'tool')
      .map((m: { tool_call_id: string }) => m.tool_call_id);
    expect(resultIds.sort()).toEqual(callIds.sort());
    for (const key of Object.keys(original)) if (key !== 'messages') expect(body[key]).toEqual(original[key]);
    await until(() => svc!.events.length === 1);
    const e = svc!.events[0]!;
    expect(e.tokensAfter).toBeLessThanOrEqual(e.tokensBefore);
    expect(e.compressionFailed).toBe(false);
  });
});
