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

const BODY = JSON.stringify({
  model: 'claude-sonnet-4-5',
  max_tokens: 9,
  messages: [{ role: 'user', content: 'hi' }],
});
const post = (url: string, headers: Record<string, string> = {}) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-test', ...headers },
    body: BODY,
  });

describe('the proxied paths (routed without polka when the target is exactly the path)', () => {
  it('routes the exact path, with a query, under a project prefix and after canonicalization the same way', async () => {
    upstream = await startMockUpstream((_r, res) => replyJson(res, 200, MESSAGES_REPLY));
    // no response cache: every request goes upstream
    svc = await startSvc({
      compress: createFakeCompress(),
      flags: { 'messages-api-url': `${upstream.url}/v1`, cache: false },
    });
    for (const target of [
      '/v1/messages',
      '/v1/messages?beta=true',
      '/p/team-a/v1/messages',
      '/v1/./messages',
      '/v1/messages/count_tokens',
    ]) {
      const res = await post(`${svc.url}${target}`);
      expect([target, res.status]).toEqual([target, 200]);
      await res.text();
    }
    expect(upstream.requests.map((r) => r.url)).toEqual([
      '/v1/messages',
      '/v1/messages?beta=true',
      '/v1/messages',
      '/v1/messages',
      '/v1/messages/count_tokens',
    ]);
    for (const r of upstream.requests) expect(r.body.toString('utf8')).toBe(BODY);
    await until(() => svc!.events.length === 5);
    // (events are emitted once each request's counts are done: not necessarily in order)
    expect(svc.events.map((e) => [e.path, e.format, e.project]).sort()).toEqual([
      ['/v1/messages', 'messages', 'default'],
      ['/v1/messages', 'messages', 'default'],
      ['/v1/messages', 'messages', 'default'],
      ['/v1/messages', 'messages', 'team-a'],
      ['/v1/messages/count_tokens', 'messages', 'default'],
    ]);
  });

  it('leaves other methods on the path to the router (passed through as other /v1 requests)', async () => {
    upstream = await startMockUpstream((_r, res) => replyJson(res, 200, { ok: true }));
    svc = await startSvc({
      compress: createFakeCompress(),
      flags: { 'messages-api-url': `${upstream.url}/v1` },
    });
    const res = await fetch(`${svc.url}/v1/messages`, { headers: { 'x-api-key': 'sk-ant-test' } });
    expect(res.status).toBe(200);
    expect(upstream.requests[0]).toMatchObject({ method: 'GET', url: '/v1/messages' });
    await until(() => svc!.events.length === 1);
    expect(svc.events[0]).toMatchObject({ format: 'other', path: '/v1/messages' });
  });
});
