import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type MockUpstream,
  replyJson,
  startMockUpstream,
  startSvc,
  type TestSvc,
} from '../server/helpers.js';

let svc: TestSvc | undefined;
let upstream: MockUpstream | undefined;
afterEach(async () => {
  await svc?.close();
  await upstream?.close();
  svc = upstream = undefined;
});

const ANSWER = {
  id: 'c',
  object: 'chat.completion',
  model: 'gpt-4o',
  choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
};

/**
 * An upstream whose kept-alive connections die while idle, the way a load balancer's idle timeout or a
 * NAT drop leaves them after a long stall: the client still holds the socket, and the request written on
 * it is met by a close with no byte of answer. Here the second request on any connection is cut so.
 */
async function upstreamDroppingIdleConnections(): Promise<MockUpstream & { served: Map<Socket, number> }> {
  const served = new Map<Socket, number>();
  const mock = await startMockUpstream((_req, res, raw) => {
    const n = (served.get(raw.socket) ?? 0) + 1;
    served.set(raw.socket, n);
    if (n > 1) {
      raw.socket.destroy();
      return;
    }
    replyJson(res, 200, ANSWER);
  });
  return Object.assign(mock, { served });
}

let asked = 0;
/** A new question each time, so the response cache never answers. */
const ask = (url: string) =>
  fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-1' },
    body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: `question ${++asked}` }] }),
  });

describe('a dead kept-alive upstream connection (issue 15, item 7)', () => {
  it('a request met by a closed reused connection is sent again on a new one, not answered 502', async () => {
    const dropping = await upstreamDroppingIdleConnections();
    upstream = dropping;
    svc = await startSvc({ flags: { 'compat-api-url': `${upstream.url}/v1` } });
    const first = await ask(svc.url);
    expect(first.status).toBe(200);
    await first.text();
    const second = await ask(svc.url);
    expect(second.status).toBe(200);
    expect(((await second.json()) as { id: string }).id).toBe('c');
    // the dead connection saw the request, a second connection answered it
    expect(upstream.requests).toHaveLength(3);
    expect(dropping.served.size).toBe(2);
  });

  it('is sent again at most once: an upstream that cuts every request on a reused connection gets 502', async () => {
    let calls = 0;
    upstream = await startMockUpstream((_req, res, raw) => {
      calls++;
      if (calls === 1) return replyJson(res, 200, ANSWER);
      raw.socket.destroy();
    });
    svc = await startSvc({ flags: { 'compat-api-url': `${upstream.url}/v1` } });
    await (await ask(svc.url)).text();
    const res = await ask(svc.url);
    expect(res.status).toBe(502);
    expect(calls).toBe(3);
  });

  it('a request on a new connection is not sent again', async () => {
    let calls = 0;
    upstream = await startMockUpstream((_req, _res, raw) => {
      calls++;
      raw.socket.destroy();
    });
    svc = await startSvc({ flags: { 'compat-api-url': `${upstream.url}/v1` } });
    const res = await ask(svc.url);
    expect(res.status).toBe(502);
    expect(calls).toBe(1);
  });
});
