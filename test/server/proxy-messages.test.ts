import { request as httpRequest, type IncomingMessage } from 'node:http';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryCcrStore } from '../../src/ccr/memory-store.js';
import { parseMarkers } from '../../src/engine/markers.js';
import type { ChatMessage } from '../../src/engine/types.js';
import { FORMATS } from '../../src/formats/index.js';
import { retrievalTool } from '../../src/server/retrieval/tool.js';
import { messagesBody } from '../formats/bodies.js';
import { createFakeCompress, throwingCompress } from './fake-engine.js';
import {
  type MockUpstream,
  replyJson,
  startMockUpstream,
  startSvc,
  type TestSvc,
  until,
  withoutRetrievalTool,
} from './helpers.js';
import { MESSAGES_REPLY, MESSAGES_SSE, startSse, writeEvents } from './sse-mocks.js';

let svc: TestSvc | undefined;
let upstream: MockUpstream | undefined;
afterEach(async () => {
  await svc?.close();
  await upstream?.close();
  svc = upstream = undefined;
});

const HEADERS = {
  'content-type': 'application/json',
  'x-api-key': 'sk-ant-test-key',
  'anthropic-version': '2023-06-01',
  'anthropic-beta': 'prompt-caching-2024-07-31',
};

// Pretty-printed, with a number JSON.parse cannot hold: proves untouched bytes are the client's bytes.
const TEXT = JSON.stringify(messagesBody(), null, 1).replace(
  '"cmd": "npm test"',
  '"cmd": "npm test", "big": 12345678901234567890',
);

async function setup(
  options: Parameters<typeof startSvc>[0] = {},
  handler = (res: import('node:http').ServerResponse) =>
    replyJson(res, 200, MESSAGES_REPLY, { 'request-id': 'req_123' }),
) {
  upstream = await startMockUpstream((_req, res) => handler(res));
  svc = await startSvc({ ...options, flags: { 'messages-api-url': `${upstream.url}/v1`, ...options.flags } });
  return { svc, upstream };
}

function post(body: string | Uint8Array, headers: Record<string, string> = HEADERS, path = '/v1/messages') {
  return fetch(`${svc!.url}${path}`, { method: 'POST', headers, body: body as BodyInit });
}

/** `tokensBefore` of `body` as a server with the real engine reports it (a server of its own). */
async function countedBefore(body: string): Promise<number> {
  const up = await startMockUpstream((_req, res) => replyJson(res, 200, MESSAGES_REPLY));
  const other = await startSvc({ flags: { 'messages-api-url': `${up.url}/v1` } });
  try {
    await (await fetch(`${other.url}/v1/messages`, { method: 'POST', headers: HEADERS, body })).text();
    await until(() => other.events.length === 1);
    return other.events[0]!.tokensBefore;
  } finally {
    await other.close();
    await up.close();
  }
}

/** Removes the two long tool outputs (original or compressed) so the rest can be compared byte for byte. */
const stripCompressed = (s: string) => s.replace(/"(content|text)": ?"(test output|log|FAKE)[^"]*"/g, '');

describe('/v1/messages (messages format)', () => {
  it('compresses tool_result text only and forwards every other byte as the client sent it', async () => {
    const ccr = createMemoryCcrStore();
    await setup({ compress: createFakeCompress(), ccr });
    const res = await post(TEXT);
    expect(res.status).toBe(200);
    expect(res.headers.get('request-id')).toBe('req_123');
    expect(await res.json()).toEqual(MESSAGES_REPLY);

    const [got] = upstream!.requests;
    expect(got!.url).toBe('/v1/messages');
    expect(got!.body.toString('utf8')).toContain('"name":"svc_retrieve"');
    const sent = withoutRetrievalTool(got!.body.toString('utf8'));
    expect(sent.length).toBeLessThan(TEXT.length);
    expect(stripCompressed(sent)).toBe(stripCompressed(TEXT));
    // the thinking block and its signature, the image, the server tool blocks: exact original text
    for (const piece of [
      '"signature": "EqQBCkYIARABGAIiQL+sig/=="',
      '"data": "ENCRYPTED=="',
      '"big": 12345678901234567890',
      '"data": "iVBORw0KGgo="',
      '"encrypted_content": "xyz"',
    ]) {
      expect(sent).toContain(piece);
    }
    const body = JSON.parse(sent);
    // every marker is redeemable from the CCR store
    const markers = parseMarkers(sent);
    expect(markers).toHaveLength(2);
    for (const m of markers) expect(await ccr.get(m.hash)).toMatch(/line 39/);
    // tool pairs intact: each tool_use is answered by a tool_result in the next message
    body.messages.forEach((msg: { role: string; content: unknown }, i: number) => {
      if (!Array.isArray(msg.content)) return;
      for (const block of msg.content as Array<{ type: string; id: string }>) {
        if (block.type !== 'tool_use') continue;
        const next = body.messages[i + 1].content as Array<{ type: string; tool_use_id: string }>;
        expect(next.some((b) => b.type === 'tool_result' && b.tool_use_id === block.id)).toBe(true);
      }
    });
    // provider headers and credentials go upstream
    expect(got!.headers).toMatchObject({
      'x-api-key': 'sk-ant-test-key',
      'anthropic-version': '2023-06-01',
      'anthropic-beta': 'prompt-caching-2024-07-31',
    });
    expect(got!.headers['content-length']).toBe(String(got!.body.length));

    await until(() => svc!.events.length === 1);
    const e = svc!.events[0]!;
    expect(e).toMatchObject({
      path: '/v1/messages',
      format: 'messages',
      mode: 'optimize',
      model: 'claude-sonnet-4-5',
      stream: false,
      status: 200,
      upstreamStatus: 200,
      transforms: ['fake:marker'],
      compressionFailed: false,
    });
    expect(e.usage).toEqual({ input: 120, output: 9, cacheRead: 1000, cacheWrite: 50 });
    // Whole requests: the forwarded one also carries svc's svc_retrieve definition (tokensAdded).
    expect(e.tokensAdded).toBeGreaterThan(0);
    expect(e.tokensSaved).toBe(e.tokensBefore - e.tokensAfter + (e.tokensAdded ?? 0));
    expect(e.tokensSaved).toBeGreaterThan(0);
    expect(e.overheadMs).toBeGreaterThanOrEqual(0);
    expect(e.latencyMs).toBeGreaterThanOrEqual(e.overheadMs);
    expect(e.keyHash).toMatch(/^[0-9a-f]{12}$/);
    expect(JSON.stringify(e)).not.toContain('sk-ant-test-key');
    expect(e.costUsd).toBeGreaterThan(0); // priced by the stats part from the reported usage
  });

  it('drops hop-by-hop headers both ways', async () => {
    await setup({ compress: createFakeCompress() }, (res) => {
      res.writeHead(200, {
        'content-type': 'application/json',
        'keep-alive': 'timeout=5',
        'x-upstream': 'yes',
      });
      res.end(JSON.stringify(MESSAGES_REPLY));
    });
    // node:http, because fetch refuses to send a Connection header
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      const r = httpRequest(`${svc!.url}/v1/messages`, {
        method: 'POST',
        headers: {
          ...HEADERS,
          connection: 'keep-alive, x-private-hop',
          'x-private-hop': '1',
          'proxy-authorization': 'Basic abc',
          'x-service-bypass': 'false',
        },
      });
      r.on('response', resolve).on('error', reject);
      r.end(TEXT);
    });
    res.resume();
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-upstream']).toBe('yes');
    expect(res.headers['keep-alive']).not.toBe('timeout=5'); // svc's own connection header, not the upstream's
    const got = upstream!.requests[0]!.headers;
    expect(got['x-private-hop']).toBeUndefined();
    expect(got['proxy-authorization']).toBeUndefined();
    expect(got['x-service-bypass']).toBeUndefined();
  });

  it('nothing to compress: forwards the original bytes', async () => {
    await setup({ compress: createFakeCompress() });
    const small =
      '{ "model" : "claude-haiku-4-5",\n "max_tokens": 10, "messages": [{"role":"user","content":"caf\\u00e9 \\/ hi"}] }';
    await post(small);
    expect(upstream!.requests[0]!.body.toString('utf8')).toBe(small);
    await until(() => svc!.events.length === 1);
    expect(svc!.events[0]!.tokensSaved).toBe(0);
  });

  it('--no-optimize: byte-for-byte passthrough, engine never called', async () => {
    const calls: ChatMessage[][] = [];
    await setup({ compress: createFakeCompress(calls), flags: { optimize: false } });
    const res = await post(TEXT);
    expect(res.status).toBe(200);
    expect(upstream!.requests[0]!.body.toString('utf8')).toBe(TEXT);
    expect(calls).toHaveLength(0);
    await until(() => svc!.events.length === 1);
    expect(svc!.events[0]).toMatchObject({ mode: 'passthrough', tokensSaved: 0 });
  });

  it('x-service-bypass: true forwards the original bytes', async () => {
    await setup({ compress: createFakeCompress() });
    await post(TEXT, { ...HEADERS, 'x-service-bypass': 'true' });
    expect(upstream!.requests[0]!.body.toString('utf8')).toBe(TEXT);
    await until(() => svc!.events.length === 1);
    expect(svc!.events[0]!.mode).toBe('bypass');
  });

  it('fails open: when the engine throws, the original is forwarded and the failure counted', async () => {
    await setup({ compress: throwingCompress });
    const res = await post(TEXT);
    expect(res.status).toBe(200);
    // the original, with the retrieval tool the conversation has on every request (its tools never change)
    const sent = upstream!.requests[0]!.body.toString('utf8');
    expect(sent).toContain('"name":"svc_retrieve"');
    expect(withoutRetrievalTool(sent)).toBe(TEXT);
    await until(() => svc!.events.length === 1);
    const failed = svc!.events[0]!;
    expect(failed).toMatchObject({ compressionFailed: true, status: 200, tokensSaved: 0 });
    // its tokens in are known (the original as sent, counted after the answer), never 0; the
    // forwarded request carries the retrieval tool on top of them
    const counted = await countedBefore(TEXT);
    expect(failed.tokensBefore).toBe(counted);
    expect(failed.tokensAfter).toBe(counted + (failed.tokensAdded ?? 0));
  });

  it('fails open when the CCR store cannot be written (no unredeemable marker goes out)', async () => {
    const ccr = { put: async () => Promise.reject(new Error('store down')), get: async () => undefined };
    await setup({ compress: createFakeCompress(), ccr });
    await post(TEXT);
    const sent = upstream!.requests[0]!.body.toString('utf8');
    // nothing but the conversation's retrieval tool is added: no marker of this request goes out
    expect(withoutRetrievalTool(sent)).toBe(TEXT);
    await until(() => svc!.events.length === 1);
    expect(svc!.events[0]!.compressionFailed).toBe(true);
    expect(svc!.events[0]!.tokensBefore).toBe(await countedBefore(TEXT));
  });

  it('a body that is not JSON is forwarded untouched and the upstream answer relayed', async () => {
    await setup({ compress: createFakeCompress() }, (res) =>
      replyJson(res, 400, { type: 'error', error: { type: 'invalid_request_error', message: 'bad json' } }),
    );
    const res = await post('{"model": ');
    expect(res.status).toBe(400);
    expect((await res.json()).error.message).toBe('bad json');
    expect(upstream!.requests[0]!.body.toString()).toBe('{"model": ');
  });

  it('gzip request: decoded and compressed; sent as is when nothing changes', async () => {
    await setup({ compress: createFakeCompress() });
    await post(gzipSync(TEXT), { ...HEADERS, 'content-encoding': 'gzip' });
    const first = upstream!.requests[0]!;
    expect(first.headers['content-encoding']).toBeUndefined();
    expect(first.body.toString()).toMatch(/FAKEtest outp/);
    const small = gzipSync('{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}');
    await post(small, { ...HEADERS, 'content-encoding': 'gzip' });
    const second = upstream!.requests[1]!;
    expect(second.headers['content-encoding']).toBe('gzip');
    expect(second.body.equals(small)).toBe(true);
  });

  it('a body in an encoding svc cannot decode is forwarded untouched with its encoding', async () => {
    await setup({ compress: createFakeCompress() });
    const opaque = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 1, 2, 3]);
    await post(opaque, { ...HEADERS, 'content-encoding': 'zstd' });
    const got = upstream!.requests[0]!;
    expect(got.headers['content-encoding']).toBe('zstd');
    expect(got.body.equals(opaque)).toBe(true);
  });

  it('stores the originals in CCR before the compressed request goes upstream', async () => {
    const order: string[] = [];
    const ccr = createMemoryCcrStore();
    const logged = {
      put: async (h: string, o: string) => {
        order.push('ccr');
        await ccr.put(h, o);
      },
      get: ccr.get,
    };
    await setup({ compress: createFakeCompress(), ccr: logged }, (res) => {
      order.push('upstream');
      replyJson(res, 200, MESSAGES_REPLY);
    });
    await post(TEXT);
    expect(order).toEqual(['ccr', 'ccr', 'upstream']);
  });

  it('gzip response: relayed with its encoding, usage still read', async () => {
    const zipped = gzipSync(JSON.stringify(MESSAGES_REPLY));
    await setup({ compress: createFakeCompress() }, (res) => {
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-encoding': 'gzip',
        'content-length': zipped.length,
      });
      res.end(zipped);
    });
    const { request } = await import('undici');
    const res = await request(`${svc!.url}/v1/messages`, { method: 'POST', headers: HEADERS, body: TEXT });
    expect(res.headers['content-encoding']).toBe('gzip');
    const raw = Buffer.from(await res.body.arrayBuffer());
    expect(raw.equals(zipped)).toBe(true);
    expect(JSON.parse(gunzipSync(raw).toString())).toEqual(MESSAGES_REPLY);
    await until(() => svc!.events.length === 1);
    expect(svc!.events[0]!.usage).toEqual({ input: 120, output: 9, cacheRead: 1000, cacheWrite: 50 });
  });

  it('streams SSE as it arrives (each event reaches the client before the next is sent) and reads usage', async () => {
    let release: (() => void) | undefined;
    const received: string[] = [];
    await setup({ compress: createFakeCompress() }, (res) => {
      startSse(res, { 'request-id': 'req_sse' });
      void writeEvents(res, MESSAGES_SSE, (i) =>
        i === 0 ? new Promise<void>((r) => (release = r)) : Promise.resolve(),
      );
    });
    const res = await post(JSON.stringify(messagesBody({ stream: true })));
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(res.headers.get('request-id')).toBe('req_sse');
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    const first = await reader.read();
    received.push(decoder.decode(first.value));
    // the upstream is still holding the rest: what we have is only the first event
    expect(received.join('')).toBe(MESSAGES_SSE[0]);
    release!();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      received.push(decoder.decode(value, { stream: true }));
    }
    expect(received.join('')).toBe(MESSAGES_SSE.join(''));
    await until(() => svc!.events.length === 1);
    expect(svc!.events[0]).toMatchObject({
      stream: true,
      status: 200,
      usage: { input: 120, output: 9, cacheRead: 1000, cacheWrite: 50 },
    });
  });
});

describe('stream headers', () => {
  it('reach the client before the first event does', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    await setup({ compress: createFakeCompress() }, (res) => {
      startSse(res);
      void gate.then(() => writeEvents(res, MESSAGES_SSE));
    });
    const res = await post(JSON.stringify(messagesBody({ stream: true })));
    expect(res.status).toBe(200); // resolved while the upstream still holds every event
    release();
    expect(await res.text()).toBe(MESSAGES_SSE.join(''));
  });
});

describe('with the real engine', () => {
  it('keeps the request a valid messages request: signatures, tool pairs, last message, other fields intact', async () => {
    await setup({});
    const res = await post(TEXT);
    expect(res.status).toBe(200);
    const sent = upstream!.requests[0]!.body.toString();
    const body = JSON.parse(sent);
    const original = JSON.parse(TEXT);
    for (const piece of [
      '"signature": "EqQBCkYIARABGAIiQL+sig/=="',
      '"data": "ENCRYPTED=="',
      '"big": 12345678901234567890',
    ]) {
      expect(sent).toContain(piece);
    }
    expect(body.messages.at(-1)).toEqual(original.messages.at(-1));
    expect(body.system).toEqual(original.system);
    for (const key of ['model', 'max_tokens']) expect(body[key]).toEqual(original[key]);
    // the client's tools, then the retrieval tool (on every request of a conversation with tools)
    expect(body.tools).toEqual([...original.tools, retrievalTool(FORMATS.messages)]);
    const uses = body.messages.flatMap((m: { content: unknown }) =>
      Array.isArray(m.content)
        ? m.content.filter((b: { type: string }) => b.type === 'tool_use').map((b: { id: string }) => b.id)
        : [],
    );
    const results = body.messages.flatMap((m: { content: unknown }) =>
      Array.isArray(m.content)
        ? m.content
            .filter((b: { type: string }) => b.type === 'tool_result')
            .map((b: { tool_use_id: string }) => b.tool_use_id)
        : [],
    );
    expect(results.sort()).toEqual(uses.sort());
    await until(() => svc!.events.length === 1);
    expect(svc!.events[0]!.compressionFailed).toBe(false);
    // Compression never adds tokens; the forwarded request also carries svc's svc_retrieve definition.
    const e = svc!.events[0]!;
    expect(e.tokensAfter - (e.tokensAdded ?? 0)).toBeLessThanOrEqual(e.tokensBefore);
    expect(e.tokensBefore - e.tokensAfter).toBe(e.tokensSaved - (e.tokensAdded ?? 0));
  });
});
