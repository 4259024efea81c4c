import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryCcrStore } from '../../src/ccr/memory-store.js';
import type { CcrStore } from '../../src/ccr/store.js';
import { parseMarkers } from '../../src/engine/markers.js';
import type { ChatMessage } from '../../src/engine/types.js';
import { createFakeCompress, throwingCompress } from './fake-engine.js';
import { longText, startSvc, type TestSvc } from './helpers.js';

const MESSAGES: ChatMessage[] = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'list the files' },
  {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'ls', arguments: '{"path":"."}' } }],
  },
  { role: 'tool', tool_call_id: 'call_1', content: longText('ls') },
  { role: 'user', content: 'which one is largest?' },
];

let svc: TestSvc | undefined;
afterEach(async () => {
  await svc?.close();
  svc = undefined;
});

function post(body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${svc!.url}/v1/compress`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

describe('POST /v1/compress', () => {
  it('returns the compression result of spec section 2 and stores originals in CCR first', async () => {
    const ccr = createMemoryCcrStore();
    svc = await startSvc({ compress: createFakeCompress(), ccr });
    const res = await post({ messages: MESSAGES, model: 'gpt-4o' });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(Object.keys(body)).toEqual([
      'messages',
      'tokens_before',
      'tokens_after',
      'tokens_saved',
      'compression_ratio',
      'transforms_applied',
      'ccr_hashes',
    ]);
    expect(body.messages).toHaveLength(5);
    expect(body.messages[3].content).toMatch(/^FAKEls line 0:/);
    const [marker] = parseMarkers(body.messages[3].content);
    expect(body.ccr_hashes).toEqual([marker!.hash]);
    expect(await ccr.get(marker!.hash)).toBe(MESSAGES[3]!.content);
    expect(body.messages[4]).toEqual(MESSAGES[4]);
    expect(body.tokens_saved).toBe(body.tokens_before - body.tokens_after);
    expect(body.compression_ratio).toBeCloseTo(body.tokens_after / body.tokens_before, 10);
    expect(body.transforms_applied).toEqual(['fake:marker']);
    expect(svc.events).toHaveLength(1);
    expect(svc.events[0]).toMatchObject({
      path: '/v1/compress',
      format: 'compress',
      mode: 'compress',
      status: 200,
    });
  });

  it('works with the real engine (invariants only)', async () => {
    svc = await startSvc();
    const res = await post({ messages: MESSAGES, model: 'gpt-4o' });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.tokens_before).toBeGreaterThan(0);
    expect(body.tokens_after).toBeLessThanOrEqual(body.tokens_before);
    expect(body.tokens_saved).toBe(body.tokens_before - body.tokens_after);
    expect(body.messages.at(-1)).toEqual(MESSAGES.at(-1));
    expect(body.messages[0]).toEqual(MESSAGES[0]);
    for (const hash of body.ccr_hashes) {
      expect(await svc.server.ctx.ccr.get(hash)).toBeTypeOf('string');
    }
  });

  it('x-service-bypass: true returns the messages as they are without calling the engine', async () => {
    const calls: ChatMessage[][] = [];
    svc = await startSvc({ compress: createFakeCompress(calls) });
    const res = await post({ messages: MESSAGES, model: 'gpt-4o' }, { 'x-service-bypass': 'true' });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.messages).toEqual(MESSAGES);
    expect(body.tokens_before).toBeGreaterThan(0);
    expect(body).toMatchObject({
      tokens_saved: 0,
      compression_ratio: 1,
      transforms_applied: [],
      ccr_hashes: [],
    });
    expect(body.tokens_after).toBe(body.tokens_before);
    expect(calls).toHaveLength(0);
    expect(svc.events[0]?.mode).toBe('bypass');
  });

  it('accepts a gzip-encoded body', async () => {
    svc = await startSvc({ compress: createFakeCompress() });
    const res = await fetch(`${svc.url}/v1/compress`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(JSON.stringify({ messages: MESSAGES, model: 'gpt-4o' })),
    });
    expect(res.status).toBe(200);
    expect((await res.json()).messages[3].content).toMatch(/^FAKE/);
  });

  it.each([
    ['not JSON', '{"messages": [', 'body'],
    ['a JSON array', '[]', 'body'],
    ['no messages', { model: 'gpt-4o' }, 'messages'],
    ['messages not an array', { messages: 'hi', model: 'gpt-4o' }, 'messages'],
    ['a message without role', { messages: [{ content: 'hi' }], model: 'gpt-4o' }, 'messages[0].role'],
    ['a user message without content', { messages: [{ role: 'user' }], model: 'x' }, 'messages[0].content'],
    ['content a number', { messages: [{ role: 'user', content: 3 }], model: 'x' }, 'messages[0].content'],
    [
      'a text part without text',
      { messages: [{ role: 'user', content: [{ type: 'text' }] }], model: 'x' },
      'messages[0].content[0].text',
    ],
    [
      'a bad tool call',
      {
        messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'a', function: { name: 'f' } }] }],
        model: 'x',
      },
      'messages[0].tool_calls[0].function.arguments',
    ],
    ['no model', { messages: MESSAGES }, 'model'],
    ['model not a string', { messages: MESSAGES, model: 4 }, 'model'],
  ])('400 for %s, naming the field', async (_name, body, field) => {
    svc = await startSvc({ compress: createFakeCompress() });
    const res = await post(body);
    expect(res.status).toBe(400);
    expect(res.headers.get('x-svc-error')).toBe('SVC_BAD_REQUEST');
    const err = await res.json();
    expect(err.error.param).toBe(field);
    expect(err.error.message).toContain(field);
    expect(err.error.type).toBe('invalid_request_error');
  });

  it('503 when the engine throws', async () => {
    svc = await startSvc({ compress: throwingCompress });
    const res = await post({ messages: MESSAGES, model: 'gpt-4o' });
    expect(res.status).toBe(503);
    expect((await res.json()).error.code).toBe('SVC_COMPRESSION_FAILED');
    expect(svc.events[0]).toMatchObject({ status: 503, compressionFailed: true });
  });

  it('503 when the CCR store cannot be written (no marker without its original)', async () => {
    const broken: CcrStore = {
      put: async () => {
        throw new Error('disk full');
      },
      get: async () => undefined,
    };
    svc = await startSvc({ compress: createFakeCompress(), ccr: broken });
    const res = await post({ messages: MESSAGES, model: 'gpt-4o' });
    expect(res.status).toBe(503);
    expect((await res.json()).error.code).toBe('SVC_STORE_UNAVAILABLE');
  });

  it('413 above --max-body-bytes', async () => {
    svc = await startSvc({ compress: createFakeCompress(), flags: { 'max-body-bytes': 1000 } });
    const res = await post({ messages: MESSAGES, model: 'gpt-4o' });
    expect(res.status).toBe(413);
    expect((await res.json()).error.code).toBe('SVC_PAYLOAD_TOO_LARGE');
  });

  describe('with keys configured', () => {
    const KEYS = { SERVICE_API_KEYS: 'sk-svc-one, sk-svc-two' };

    it.each([
      ['no key', {}],
      ['a wrong bearer key', { authorization: 'Bearer sk-svc-three' }],
      ['a wrong x-api-key', { 'x-api-key': 'sk-svc-on' }],
      ['a key prefix', { authorization: 'Bearer sk-svc-one-extra' }],
    ])('401 with %s', async (_name, headers) => {
      svc = await startSvc({ compress: createFakeCompress(), env: KEYS });
      const res = await post({ messages: MESSAGES, model: 'gpt-4o' }, headers as Record<string, string>);
      expect(res.status).toBe(401);
      const text = await res.text();
      expect(JSON.parse(text).error.type).toBe('authentication_error');
      expect(text).not.toContain('sk-svc');
    });

    it.each([
      ['Authorization: Bearer', { authorization: 'Bearer sk-svc-two' }],
      ['x-api-key', { 'x-api-key': 'sk-svc-one' }],
    ])('200 with the key as %s', async (_name, headers) => {
      svc = await startSvc({ compress: createFakeCompress(), env: KEYS });
      const res = await post({ messages: MESSAGES, model: 'gpt-4o' }, headers);
      expect(res.status).toBe(200);
      expect(svc.events[0]?.keyHash).toMatch(/^[0-9a-f]{12}$/);
    });

    it('--api-key flags work too', async () => {
      svc = await startSvc({ compress: createFakeCompress(), flags: { 'api-key': ['k1', 'k2'] } });
      expect((await post({ messages: MESSAGES, model: 'm' }, { 'x-api-key': 'k2' })).status).toBe(200);
      expect((await post({ messages: MESSAGES, model: 'm' }, { 'x-api-key': 'k3' })).status).toBe(401);
    });
  });
});
