import { afterEach, describe, expect, it } from 'vitest';
import { isSvcError } from '../../src/errors.js';
import { canonicalPath } from '../../src/server/canonical-path.js';
import { startGuardedSvc } from '../guards/helpers.js';
import { type MockUpstream, replyJson, startMockUpstream, type TestSvc, until } from '../server/helpers.js';
import { CHAT_REPLY } from '../server/sse-mocks.js';
import { rawRequest } from './raw-http.js';

let svc: TestSvc | undefined;
let upstream: MockUpstream | undefined;
afterEach(async () => {
  await svc?.close();
  await upstream?.close();
  svc = upstream = undefined;
});

describe('canonicalPath (issue 15, item 2)', () => {
  it.each([
    ['/v1/chat/completions', '/v1/chat/completions'],
    ['/v1/./chat/completions', '/v1/chat/completions'],
    ['/v1/chat/./completions', '/v1/chat/completions'],
    ['/v1/messages/../chat/completions', '/v1/chat/completions'],
    ['//v1///chat//completions', '/v1/chat/completions'],
    ['/v1/chat/%63ompletions', '/v1/chat/completions'],
    ['/v1/%2e/chat/completions', '/v1/chat/completions'],
    ['/v1/models/a%2fb'.replace('%2fb', '%20b'), '/v1/models/a%20b'],
    ['/v1/files/x%3a', '/v1/files/x%3A'],
    ['/dashboard/', '/dashboard/'],
    ['/v1/models/.', '/v1/models/'],
    ['/', '/'],
  ])('%s -> %s', (raw, canonical) => {
    expect(canonicalPath(raw)).toBe(canonical);
  });

  it.each([
    ['/v1/../../admin', 'above the root'],
    ['/v1/../admin', 'out of /v1'],
    ['/v1/%2e%2e/admin', 'out of /v1'],
    ['/v1/%2E%2E/%2e%2e/admin', 'above the root'],
    ['/v1/chat%2fcompletions', 'encoded slashes'],
    ['/v1/chat%5Ccompletions', 'encoded slashes'],
    ['/v1\\..\\..\\admin', 'backslashes'],
    ['/v1/chat/completions%', 'malformed'],
    ['/v1/chat/completions%zz', 'malformed'],
    ['http://evil.example/v1/chat/completions', 'starting with /'],
  ])('refuses %s (%s)', (raw, why) => {
    let thrown: unknown;
    try {
      canonicalPath(raw);
    } catch (err) {
      thrown = err;
    }
    expect(isSvcError(thrown) && thrown.code).toBe('SVC_BAD_REQUEST');
    expect((thrown as Error).message).toContain(why);
  });
});

const ODD_SPELLINGS = [
  '/v1/./chat/completions',
  '/v1/chat/./completions',
  '/v1/messages/../chat/completions',
];
const body = (i: number) =>
  JSON.stringify({
    model: 'gpt-4o',
    max_tokens: 100,
    messages: [{ role: 'user', content: `question ${i}` }],
  });

async function setup(flags: Record<string, unknown>): Promise<void> {
  upstream = await startMockUpstream((_req, res) =>
    replyJson(res, 200, {
      ...CHAT_REPLY,
      usage: { prompt_tokens: 10, completion_tokens: 100, total_tokens: 110 },
    }),
  );
  svc = await startGuardedSvc({ flags: { 'compat-api-url': `${upstream.url}/v1`, ...flags } });
}

describe('odd spellings of a path go through the guards (issue 15, item 2)', () => {
  it.each(ODD_SPELLINGS)(
    '%s: the rate limit applies (429) and the upstream got the canonical path',
    async (path) => {
      await setup({ 'rate-limit-rpm': 1 });
      const first = await rawRequest(svc!.url, path, {
        body: body(1),
        headers: { authorization: 'Bearer sk-1' },
      });
      expect(first.status).toBe(200);
      const second = await rawRequest(svc!.url, path, {
        body: body(2),
        headers: { authorization: 'Bearer sk-1' },
      });
      expect(second.status).toBe(429);
      expect(upstream!.requests.map((r) => r.url)).toEqual(['/v1/chat/completions']);
    },
  );

  it.each(ODD_SPELLINGS)('%s: the budget applies (402)', async (path) => {
    await setup({ budget: 0.0001 });
    const headers = { authorization: 'Bearer sk-1' };
    // the first request spends $0.001 (data/pricing.json), over the $0.0001 budget
    expect((await rawRequest(svc!.url, '/v1/chat/completions', { body: body(1), headers })).status).toBe(200);
    await until(() => svc!.events.length === 1);
    const res = await rawRequest(svc!.url, path, { body: body(2), headers });
    expect(res.status).toBe(402);
    expect(upstream!.requests).toHaveLength(1);
  });

  it.each(ODD_SPELLINGS)('%s: answered from the response cache like the canonical path', async (path) => {
    await setup({});
    const headers = { authorization: 'Bearer sk-1' };
    expect((await rawRequest(svc!.url, '/v1/chat/completions', { body: body(7), headers })).status).toBe(200);
    const again = await rawRequest(svc!.url, path, { body: body(7), headers });
    expect(again.status).toBe(200);
    expect(upstream!.requests).toHaveLength(1);
  });

  it.each(['/v1/../../admin', '/v1/../admin', '/v1/%2e%2e/admin', '/v1/chat%2fcompletions'])(
    '%s is refused with 400 and never reaches the upstream',
    async (path) => {
      await setup({});
      const res = await rawRequest(svc!.url, path, { body: body(1) });
      expect(res.status).toBe(400);
      expect(res.headers['x-svc-error']).toBe('SVC_BAD_REQUEST');
      expect(upstream!.requests).toHaveLength(0);
    },
  );

  it('a 404 names the path but never echoes the query string (issue 15, item 7)', async () => {
    await setup({});
    const res = await rawRequest(svc!.url, '/nothing/here?key=sk-secret-123&x=<script>');
    expect(res.status).toBe(404);
    expect(res.body).toContain('/nothing/here');
    expect(res.body).not.toContain('sk-secret-123');
    expect(res.body).not.toContain('<script>');
  });
});
