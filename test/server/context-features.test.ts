import { afterEach, describe, expect, it } from 'vitest';
import { longText, messagesBody } from '../formats/bodies.js';
import { createFakeCompress } from './fake-engine.js';
import { type MockUpstream, replyJson, startMockUpstream, startSvc, type TestSvc } from './helpers.js';
import { MESSAGES_REPLY } from './sse-mocks.js';

let svc: TestSvc | undefined;
let upstream: MockUpstream | undefined;
afterEach(async () => {
  await svc?.close();
  await upstream?.close();
  svc = upstream = undefined;
});

type Json = Record<string, unknown>;

async function start() {
  upstream = await startMockUpstream(async (req, res) => {
    if (req.url.startsWith('/v1/messages/count_tokens')) replyJson(res, 200, { input_tokens: 4321 });
    else replyJson(res, 200, MESSAGES_REPLY);
  });
  svc = await startSvc({
    compress: createFakeCompress(),
    flags: { 'messages-api-url': `${upstream.url}/v1`, 'compat-api-url': `${upstream.url}/v1` },
  });
}

const HEADERS = {
  'content-type': 'application/json',
  'x-api-key': 'sk-ant-test',
  'anthropic-version': '2023-06-01',
  'anthropic-beta': 'compact-2026-01-12,context-management-2025-06-27',
};

function post(path: string, body: unknown) {
  return fetch(`${svc!.url}${path}`, { method: 'POST', headers: HEADERS, body: JSON.stringify(body) });
}

/** Every `cache_control` value in a JSON text, in order. */
function breakpoints(text: string): unknown[] {
  const found: unknown[] = [];
  const walk = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object')
      for (const [k, x] of Object.entries(v)) k === 'cache_control' ? found.push(x) : walk(x);
  };
  walk(JSON.parse(text));
  return found;
}

describe('/v1/messages/count_tokens', () => {
  it('is compressed as /v1/messages would be: the forwarded bodies are equal, the count relayed', async () => {
    await start();
    const body = messagesBody();
    expect((await post('/v1/messages', body)).status).toBe(200);
    const counted = await post('/v1/messages/count_tokens?beta=true', body);
    expect(await counted.json()).toEqual({ input_tokens: 4321 });
    const [asked, count] = upstream!.requests;
    expect(count!.url).toBe('/v1/messages/count_tokens?beta=true');
    expect(count!.body.toString()).toBe(asked!.body.toString());
    // and it is the compressed body, not the client's
    expect(count!.body.toString()).not.toBe(JSON.stringify(body));
    expect(count!.body.toString()).toContain('FAKEtest outpu');
  });
});

describe("the providers' own context features pass intact", () => {
  it('anthropic-beta is forwarded unchanged', async () => {
    await start();
    await post('/v1/messages', messagesBody());
    expect(upstream!.requests[0]!.headers['anthropic-beta']).toBe(HEADERS['anthropic-beta']);
  });

  it('context_management is forwarded unchanged', async () => {
    await start();
    const context_management = {
      edits: [
        {
          type: 'clear_tool_uses_20250919',
          trigger: { type: 'input_tokens', value: 30000 },
          keep: { type: 'tool_uses', value: 3 },
        },
        { type: 'compact_20260112', trigger: { type: 'input_tokens', value: 150000 } },
      ],
    };
    const body = { ...messagesBody(), context_management };
    await post('/v1/messages', body);
    const sent = upstream!.requests[0]!.body.toString();
    expect(sent).toContain(`"context_management":${JSON.stringify(context_management)}`);
    expect(sent).toContain('FAKEtest outpu'); // the request was compressed
  });

  it('a compaction block is never changed, and nothing before the latest one is compressed', async () => {
    await start();
    const compaction = { type: 'compaction', content: `Summary of the work so far.\n${longText('summary')}` };
    const before = [
      { role: 'user', content: [{ type: 'text', text: longText('old request') }] },
      { role: 'assistant', content: [{ type: 'text', text: longText('old answer') }] },
    ];
    const body = messagesBody() as Json & { messages: Json[] };
    const messages = [...before, { role: 'assistant', content: [compaction] }, ...body.messages];
    await post('/v1/messages', { ...body, messages });
    const sent = JSON.parse(upstream!.requests[0]!.body.toString()) as { messages: Json[] };
    expect(sent.messages.slice(0, 3)).toEqual(messages.slice(0, 3));
    // after it, tool output is compressed as usual
    expect(JSON.stringify(sent.messages.slice(3))).toContain('FAKEtest outpu');
  });

  it('svc never adds a cache_control breakpoint and keeps the TTLs', async () => {
    await start();
    const body = messagesBody() as Json & { messages: Json[]; system: Json[]; tools: Json[] };
    const text = JSON.stringify({
      ...body,
      system: [{ ...body.system[0], cache_control: { type: 'ephemeral', ttl: '1h' } }],
      tools: [{ ...body.tools[0], cache_control: { type: 'ephemeral', ttl: '1h' } }],
    });
    expect(breakpoints(text)).toHaveLength(4);
    await fetch(`${svc!.url}/v1/messages`, { method: 'POST', headers: HEADERS, body: text });
    const sent = upstream!.requests[0]!.body.toString();
    expect(sent).toContain('svc_retrieve'); // markers inserted and the retrieval tool offered
    expect(breakpoints(sent)).toEqual(breakpoints(text));
  });
});
