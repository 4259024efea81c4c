import { afterEach, describe, expect, it, vi } from 'vitest';
import { type CompressFn, countRequestText, lazyEngine } from '../../src/compression.js';
import { toolsJson } from '../../src/stats/prefix-shape.js';
import { type MockUpstream, replyJson, startMockUpstream, startSvc, type TestSvc, until } from './helpers.js';
import { MESSAGES_REPLY } from './sse-mocks.js';

let svc: TestSvc | undefined;
let upstream: MockUpstream | undefined;
afterEach(async () => {
  await svc?.close();
  await upstream?.close();
  svc = upstream = undefined;
});

/** A test log of `n` lines with distinct numbers: new content the router compresses. */
function testLog(n: number): string {
  return Array.from(
    { length: n },
    (_, i) =>
      `2026-11-25T05:${String(i % 60).padStart(2, '0')}:00Z INFO worker-${i % 7} processed batch ${i * 37} in ${i % 90}ms`,
  ).join('\n');
}

describe('token counts for the stats: after the request is forwarded (issue 19)', () => {
  it('forwards the compressed request before counting it, and the counts still reach the stats', async () => {
    const order: string[] = [];
    upstream = await startMockUpstream((_r, res) => {
      order.push('forwarded');
      replyJson(res, 200, MESSAGES_REPLY);
    });
    // the real engine, with a probe on the one field the stats read first
    const compress: CompressFn = async (messages, options, deps) => {
      const out = await lazyEngine.compress(messages, options, deps);
      const result = new Proxy(out.result, {
        get(target, key, receiver) {
          if (key === 'tokens_before') order.push('counted');
          return Reflect.get(target, key, receiver);
        },
      });
      return { ...out, result };
    };
    svc = await startSvc({ compress, flags: { 'messages-api-url': `${upstream.url}/v1` } });
    const body = {
      model: 'claude-sonnet-4-5',
      max_tokens: 256,
      tools: [{ name: 'Bash', description: 'Runs a command', input_schema: { type: 'object' } }],
      messages: [
        { role: 'user', content: 'Run the tests.' },
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'npm test' } }],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: testLog(600) }] },
        { role: 'user', content: 'Which batch was slowest?' },
      ],
    };
    const res = await fetch(`${svc.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-test' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    const events = svc.events;
    await until(() => events.length > 0);
    const event = events.at(-1)!;
    // compressed: the forwarded body is smaller, and the event has the engine's counts
    expect(upstream.requests[0]!.body.length).toBeLessThan(JSON.stringify(body).length);
    expect(event.tokensBefore).toBeGreaterThan(event.tokensAfter);
    expect(event.tokensSaved).toBe(event.tokensBefore - event.tokensAfter + (event.tokensAdded ?? 0));
    expect(event.transforms.some((t) => t.startsWith('router:'))).toBe(true);
    // the svc_retrieve tool svc added is counted with the rest
    expect(event.tokensAdded).toBeGreaterThan(0);
    // ... counted once the upstream had the request, never before
    expect(order[0]).toBe('forwarded');
    expect(order).toContain('counted');
  });

  it('counts a tool list as its JSON text, and svc_retrieve as what it adds to that text', async () => {
    upstream = await startMockUpstream((_r, res) => replyJson(res, 200, MESSAGES_REPLY));
    svc = await startSvc({ flags: { 'messages-api-url': `${upstream.url}/v1` } });
    const tools = [
      { name: 'Bash', description: 'Runs a command in a shell', input_schema: { type: 'object' } },
      {
        name: 'Read',
        description: 'Reads a file: "path" is absolute',
        input_schema: { type: 'object', properties: { path: { type: 'string' } } },
      },
    ];
    const messages = [
      { role: 'user', content: 'Run the tests.' },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'npm test' } }],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: testLog(600) }] },
      { role: 'user', content: 'Which batch was slowest?' },
    ];
    const send = async (body: object) => {
      const seen = svc!.events.length;
      const res = await fetch(`${svc!.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-test' },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      await until(() => svc!.events.length > seen);
      return svc!.events.at(-1)!;
    };
    const model = 'claude-sonnet-4-5';
    const without = await send({ model, max_tokens: 256, messages });
    const withTools = await send({ model, max_tokens: 256, messages, tools });
    // the tool list, counted as JSON.stringify gives it, is the difference in the whole request
    expect(withTools.tokensBefore - without.tokensBefore).toBe(
      await countRequestText(model, JSON.stringify(tools)),
    );
    // svc_retrieve went at the end of the list; what it added is the list as forwarded less the list as sent
    const forwarded = JSON.parse(upstream.requests.at(-1)!.body.toString()).tools as unknown[];
    expect(forwarded.slice(0, -1)).toEqual(tools);
    expect(withTools.tokensAdded).toBe(
      (await countRequestText(model, JSON.stringify(forwarded))) -
        (await countRequestText(model, JSON.stringify(tools))),
    );
  });

  it('writes a tool list as JSON once per parsed list', () => {
    const tools = [{ name: 'Bash', input_schema: { type: 'object', properties: { a: { type: 'string' } } } }];
    const stringify = vi.spyOn(JSON, 'stringify');
    try {
      const first = toolsJson(tools);
      expect(toolsJson(tools)).toBe(first);
      // written once: the hash and the counts of a request share the text
      expect(stringify).toHaveBeenCalledTimes(1);
      expect(toolsJson([...tools])).toBe(first);
      expect(stringify).toHaveBeenCalledTimes(2);
    } finally {
      stringify.mockRestore();
    }
    expect(toolsJson(tools)).toBe(JSON.stringify(tools));
  });
});
