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

  it('counts after a response a message at a time, and waits while a request that arrived meanwhile is on its path', async () => {
    let release: (() => void) | undefined;
    upstream = await startMockUpstream((_r, res) => {
      // the first request is answered at once; the second is held until the test releases it
      if (upstream!.requests.length === 1) replyJson(res, 200, MESSAGES_REPLY);
      else release = () => replyJson(res, 200, MESSAGES_REPLY);
    });
    // in process (no large-body worker): the counts are made on the event loop the requests share
    svc = await startSvc({ flags: { 'messages-api-url': `${upstream.url}/v1`, 'large-body-bytes': 0 } });
    const post = (body: object) =>
      fetch(`${svc!.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-test' },
        body: JSON.stringify(body),
      });
    // a long new conversation: counting it takes far longer than one slice of work
    const messages: object[] = [{ role: 'user', content: 'Run the jobs.' }];
    for (let k = 0; k < 40; k++) {
      messages.push({
        role: 'assistant',
        content: [{ type: 'tool_use', id: `toolu_${k}`, name: 'Bash', input: { command: `job ${k}` } }],
      });
      const log = testLog(400).replaceAll('worker-', `job${k}-worker-`);
      messages.push({
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: `toolu_${k}`, content: log }],
      });
    }
    messages.push({ role: 'user', content: 'Which batch was slowest?' });
    const first = await post({ model: 'claude-sonnet-4-5', max_tokens: 256, messages });
    expect(first.status).toBe(200);
    await first.arrayBuffer();
    const second = post({
      model: 'claude-sonnet-4-5',
      max_tokens: 256,
      messages: [{ role: 'user', content: 'Hi' }],
    });
    second.catch(() => undefined); // awaited below; a failed assertion before that must not leave it unhandled
    await until(() => release !== undefined);
    // the second request is on its path (the upstream holds it): the first one's counts wait for it
    expect(svc.events).toHaveLength(0);
    release!();
    expect((await second).status).toBe(200);
    await until(() => svc!.events.length === 2);
    const [a, b] = [
      svc.events.find((e) => e.tokensBefore > 1000)!,
      svc.events.find((e) => e.tokensBefore < 1000)!,
    ];
    expect(a.tokensBefore).toBeGreaterThan(a.tokensAfter);
    expect(a.tokensSaved).toBe(a.tokensBefore - a.tokensAfter + (a.tokensAdded ?? 0));
    expect(b.tokensBefore).toBeGreaterThan(0);
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
