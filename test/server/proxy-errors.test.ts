import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { chatBody, messagesBody } from '../formats/bodies.js';
import { createFakeCompress } from './fake-engine.js';
import { type MockUpstream, replyJson, startMockUpstream, startSvc, type TestSvc, until } from './helpers.js';
import { MESSAGES_SSE, startSse } from './sse-mocks.js';

let svc: TestSvc | undefined;
let upstream: MockUpstream | undefined;
afterEach(async () => {
  await svc?.close();
  await upstream?.close();
  svc = upstream = undefined;
});

const FORMATS = [
  { name: 'messages', path: '/v1/messages', flag: 'messages-api-url', body: JSON.stringify(messagesBody()) },
  { name: 'chat', path: '/v1/chat/completions', flag: 'compat-api-url', body: JSON.stringify(chatBody()) },
] as const;

async function closedPortUrl(): Promise<string> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return `http://127.0.0.1:${port}/v1`;
}

interface ErrorBody {
  type?: string;
  error: { type: string; message: string; code?: string };
}

function expectShape(format: string, body: ErrorBody, status: number) {
  if (format === 'messages') {
    expect(body.type).toBe('error');
    expect(typeof body.error.type).toBe('string');
    expect(typeof body.error.message).toBe('string');
  } else {
    expect(typeof body.error.message).toBe('string');
    expect(typeof body.error.type).toBe('string');
    expect(typeof body.error.code).toBe('string');
  }
  expect(status).toBeGreaterThanOrEqual(400);
}

describe.each(FORMATS)('$name format errors', (f) => {
  it('502 when the upstream is unreachable, in the provider error shape', async () => {
    svc = await startSvc({ compress: createFakeCompress(), flags: { [f.flag]: await closedPortUrl() } });
    const res = await fetch(`${svc.url}${f.path}`, {
      method: 'POST',
      body: f.body,
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(502);
    expect(res.headers.get('x-svc-error')).toBe('SVC_UPSTREAM_UNREACHABLE');
    expectShape(f.name, await res.json(), res.status);
    await until(() => svc!.events.length === 1);
    expect(svc!.events[0]).toMatchObject({ status: 502, errorCode: 'SVC_UPSTREAM_UNREACHABLE' });
  });

  it('502 when the upstream resets the connection', async () => {
    upstream = await startMockUpstream((_r, res) => {
      res.socket?.destroy();
    });
    svc = await startSvc({ compress: createFakeCompress(), flags: { [f.flag]: `${upstream.url}/v1` } });
    const res = await fetch(`${svc.url}${f.path}`, { method: 'POST', body: f.body });
    expect(res.status).toBe(502);
    expectShape(f.name, await res.json(), res.status);
  });

  it('a reset after the response started cuts the client connection and is recorded', async () => {
    upstream = await startMockUpstream((_r, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"partial":');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    svc = await startSvc({ compress: createFakeCompress(), flags: { [f.flag]: `${upstream.url}/v1` } });
    const res = await fetch(`${svc.url}${f.path}`, { method: 'POST', body: f.body });
    expect(res.status).toBe(200);
    await expect(res.text()).rejects.toThrow();
    await until(() => svc!.events.length === 1);
    expect(svc!.events[0]).toMatchObject({ status: 200, errorCode: 'SVC_UPSTREAM_UNREACHABLE' });
  });

  it('504 when the upstream does not answer within --upstream-timeout', async () => {
    upstream = await startMockUpstream(() => undefined);
    svc = await startSvc({
      compress: createFakeCompress(),
      flags: { [f.flag]: `${upstream.url}/v1`, 'upstream-timeout': 300 },
    });
    const res = await fetch(`${svc.url}${f.path}`, { method: 'POST', body: f.body });
    expect(res.status).toBe(504);
    expect(res.headers.get('x-svc-error')).toBe('SVC_UPSTREAM_TIMEOUT');
    expectShape(f.name, await res.json(), res.status);
  });

  it('413 above --max-body-bytes, before anything goes upstream', async () => {
    upstream = await startMockUpstream((_r, res) => replyJson(res, 200, {}));
    svc = await startSvc({
      compress: createFakeCompress(),
      flags: { [f.flag]: `${upstream.url}/v1`, 'max-body-bytes': 1024 },
    });
    const res = await fetch(`${svc.url}${f.path}`, { method: 'POST', body: f.body });
    expect(res.status).toBe(413);
    expectShape(f.name, await res.json(), res.status);
    expect(upstream.requests).toHaveLength(0);
  });

  it.each([400, 401, 429, 500, 529])('relays an upstream %i as it is', async (status) => {
    const errorBody = { type: 'error', error: { type: 'upstream_said', message: `status ${status}` } };
    upstream = await startMockUpstream((_r, res) =>
      replyJson(res, status, errorBody, { 'retry-after': '7', 'x-request-id': 'r1' }),
    );
    svc = await startSvc({ compress: createFakeCompress(), flags: { [f.flag]: `${upstream.url}/v1` } });
    const res = await fetch(`${svc.url}${f.path}`, { method: 'POST', body: f.body });
    expect(res.status).toBe(status);
    expect(res.headers.get('retry-after')).toBe('7');
    expect(res.headers.get('x-request-id')).toBe('r1');
    expect(res.headers.get('x-svc-error')).toBeNull();
    expect(await res.json()).toEqual(errorBody);
    await until(() => svc!.events.length === 1);
    expect(svc!.events[0]).toMatchObject({ status, upstreamStatus: status });
  });
});

describe('client abort', () => {
  it('a client that disconnects mid-stream cancels the upstream request', async () => {
    let upstreamClosed!: () => void;
    const closed = new Promise<void>((r) => (upstreamClosed = r));
    upstream = await startMockUpstream((_r, res) => {
      startSse(res);
      res.write(MESSAGES_SSE[0]);
      res.on('close', () => upstreamClosed()); // never ends on its own
    });
    svc = await startSvc({
      compress: createFakeCompress(),
      flags: { 'messages-api-url': `${upstream.url}/v1` },
    });
    const controller = new AbortController();
    const res = await fetch(`${svc.url}/v1/messages`, {
      method: 'POST',
      body: JSON.stringify(messagesBody({ stream: true })),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
    await closed; // the test times out if the abort never reaches the upstream
    await until(() => svc!.events.length === 1);
    expect(svc!.events[0]).toMatchObject({ status: 499, errorCode: 'SVC_CLIENT_CLOSED' });
  });

  it('a client that disconnects before the upstream answered cancels it too', async () => {
    let upstreamClosed!: () => void;
    const closed = new Promise<void>((r) => (upstreamClosed = r));
    let arrived!: () => void;
    const got = new Promise<void>((r) => (arrived = r));
    upstream = await startMockUpstream((_r, res) => {
      res.on('close', () => upstreamClosed());
      arrived();
    });
    svc = await startSvc({
      compress: createFakeCompress(),
      flags: { 'compat-api-url': `${upstream.url}/v1` },
    });
    const controller = new AbortController();
    const pending = fetch(`${svc.url}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify(chatBody()),
      signal: controller.signal,
    }).catch((e) => e);
    await got;
    controller.abort();
    expect(await pending).toBeInstanceOf(Error);
    await closed;
  });
});

describe('other /v1 paths pass through', () => {
  it('GET /v1/models with its query goes to the chat upstream unchanged', async () => {
    upstream = await startMockUpstream((_r, res) => replyJson(res, 200, { data: [{ id: 'gpt-4o' }] }));
    svc = await startSvc({ flags: { 'compat-api-url': `${upstream.url}/v1` } });
    const res = await fetch(`${svc.url}/v1/models?limit=5`, { headers: { authorization: 'Bearer sk-x' } });
    expect(await res.json()).toEqual({ data: [{ id: 'gpt-4o' }] });
    expect(upstream.requests[0]).toMatchObject({ method: 'GET', url: '/v1/models?limit=5' });
    expect(upstream.requests[0]!.headers.authorization).toBe('Bearer sk-x');
    await until(() => svc!.events.length === 1);
    expect(svc!.events[0]).toMatchObject({ format: 'other', path: '/v1/models', status: 200 });
  });

  // (count_tokens is compressed like /v1/messages: test/server/context-features.test.ts)
  it('POST /v1/messages/batches goes to the messages upstream byte for byte', async () => {
    upstream = await startMockUpstream((_r, res) => replyJson(res, 200, { input_tokens: 42 }));
    svc = await startSvc({
      compress: createFakeCompress(),
      flags: { 'messages-api-url': `${upstream.url}/v1` },
    });
    const body = JSON.stringify(messagesBody());
    const res = await fetch(`${svc.url}/v1/messages/batches?beta=true`, {
      method: 'POST',
      body,
      headers: { 'anthropic-version': '2023-06-01' },
    });
    expect(await res.json()).toEqual({ input_tokens: 42 });
    expect(upstream.requests[0]!.url).toBe('/v1/messages/batches?beta=true');
    expect(upstream.requests[0]!.body.toString()).toBe(body);
  });

  it('paths outside /v1 that svc does not serve, and GET /v1/compress, are 404 (never forwarded)', async () => {
    upstream = await startMockUpstream((_r, res) => replyJson(res, 200, {}));
    svc = await startSvc({ flags: { 'compat-api-url': `${upstream.url}/v1` } });
    expect((await fetch(`${svc.url}/nope`)).status).toBe(404);
    expect((await fetch(`${svc.url}/v1/compress`)).status).toBe(404);
    expect(upstream.requests).toHaveLength(0);
  });
});
