import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createFakeCompress } from './fake-engine.js';
import { type MockUpstream, replyJson, startMockUpstream, startSvc, type TestSvc, until } from './helpers.js';
import { MESSAGES_REPLY } from './sse-mocks.js';

let svc: TestSvc | undefined;
let upstream: MockUpstream | undefined;
afterEach(async () => {
  await svc?.close();
  await upstream?.close();
  svc = upstream = undefined;
});

/** Starts a chunked POST to /v1/messages (no content-length) and writes `chunks` to it. */
function chunked(url: string, chunks: string[], end: boolean) {
  const req = request(`${url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-test' },
  });
  const outcome = new Promise<number | Error>((resolve) => {
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', resolve);
  });
  for (const c of chunks) req.write(c);
  if (end) req.end();
  return { req, outcome };
}

describe('reading a request body', () => {
  it('reads a body sent in chunks of unknown length', async () => {
    upstream = await startMockUpstream((_r, res) => replyJson(res, 200, MESSAGES_REPLY));
    svc = await startSvc({
      compress: createFakeCompress(),
      flags: { 'messages-api-url': `${upstream.url}/v1` },
    });
    const body = JSON.stringify({
      model: 'claude-sonnet-4-5',
      max_tokens: 9,
      messages: [{ role: 'user', content: 'hi' }],
    });
    const { outcome } = chunked(svc.url, [body.slice(0, 20), body.slice(20, 50), body.slice(50)], true);
    expect(await outcome).toBe(200);
    expect(upstream.requests[0]!.body.toString('utf8')).toBe(body);
  });

  it('stops reading a chunked body past --max-body-bytes: nothing goes upstream, the server goes on', async () => {
    upstream = await startMockUpstream((_r, res) => replyJson(res, 200, MESSAGES_REPLY));
    svc = await startSvc({
      compress: createFakeCompress(),
      flags: { 'messages-api-url': `${upstream.url}/v1`, 'max-body-bytes': 1000 },
    });
    const { req, outcome } = chunked(svc.url, ['{"messages":[', 'x'.repeat(600), 'x'.repeat(600)], false);
    const got = await outcome;
    req.destroy();
    // the request was cut (as leaving its iteration does) or answered 413
    expect(got === 413 || got instanceof Error).toBe(true);
    await until(() => svc!.events.length === 1);
    expect(svc.events[0]).toMatchObject({ status: 413, errorCode: 'SVC_PAYLOAD_TOO_LARGE' });
    expect(upstream.requests).toHaveLength(0);
    const ok = await fetch(`${svc.url}/health`);
    expect(ok.status).toBe(200);
  });

  it('gives up on a body whose client went away mid-way: nothing goes upstream, the request is counted', async () => {
    upstream = await startMockUpstream((_r, res) => replyJson(res, 200, MESSAGES_REPLY));
    svc = await startSvc({
      compress: createFakeCompress(),
      flags: { 'messages-api-url': `${upstream.url}/v1` },
    });
    const { req, outcome } = chunked(svc.url, ['{"model":"claude-sonnet-4-5","messages":['], false);
    await new Promise((r) => setTimeout(r, 50));
    req.destroy();
    expect(await outcome).toBeInstanceOf(Error);
    await until(() => svc!.events.length === 1);
    expect(svc.events[0]).toMatchObject({ status: 499, errorCode: 'SVC_CLIENT_CLOSED' });
    expect(upstream.requests).toHaveLength(0);
  });
});
