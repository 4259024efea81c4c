import { afterEach, describe, expect, it } from 'vitest';
import { canonicalJson, responseCacheKey } from '../../src/guards/cache-key.js';
import { credentialOf } from '../../src/guards/credentials.js';
import { startGuardedSvc } from '../guards/helpers.js';
import { type MockUpstream, replyJson, startMockUpstream, type TestSvc } from '../server/helpers.js';
import { CHAT_REPLY } from '../server/sse-mocks.js';
import { rawRequest } from './raw-http.js';

let svc: TestSvc | undefined;
let upstream: MockUpstream | undefined;
afterEach(async () => {
  await svc?.close();
  await upstream?.close();
  svc = upstream = undefined;
});

/** Each way a key can arrive: headers and query for a key value. */
const STYLES: Array<
  [name: string, send: (key: string) => { headers: Record<string, string>; query: string }]
> = [
  ['Authorization: Bearer', (k) => ({ headers: { authorization: `Bearer ${k}` }, query: '' })],
  [
    'Authorization: Basic',
    (k) => ({
      headers: { authorization: `Basic ${Buffer.from(`user:${k}`).toString('base64')}` },
      query: '',
    }),
  ],
  ['x-api-key', (k) => ({ headers: { 'x-api-key': k }, query: '' })],
  ['api-key (Azure)', (k) => ({ headers: { 'api-key': k }, query: '' })],
  ['x-goog-api-key', (k) => ({ headers: { 'x-goog-api-key': k }, query: '' })],
  ['query key', (k) => ({ headers: {}, query: `?key=${k}` })],
];

describe('credentialOf (issue 15, item 3)', () => {
  it.each(STYLES)('%s is a credential, and another key is another credential', (_name, send) => {
    const a = send('sk-aaa');
    const b = send('sk-bbb');
    expect(credentialOf(a.headers, a.query)).toBeDefined();
    expect(credentialOf(a.headers, a.query)).not.toBe(credentialOf(b.headers, b.query));
  });

  it('keeps the material of Bearer and x-api-key keys as it was (the bare key)', () => {
    expect(credentialOf({ authorization: 'Bearer sk-1' })).toBe('sk-1');
    expect(credentialOf({ 'x-api-key': 'sk-1' })).toBe('sk-1');
  });

  it('is undefined without any credential, and combines several', () => {
    expect(credentialOf({}, '?x=1')).toBeUndefined();
    expect(credentialOf({ authorization: 'Bearer a', 'api-key': 'b' })).toBe('a\nb');
  });
});

describe('the response cache is partitioned by every credential (issue 15, item 3)', () => {
  const body = JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'what is 2+2?' }] });

  async function setup(): Promise<void> {
    upstream = await startMockUpstream((_req, res) => replyJson(res, 200, CHAT_REPLY));
    svc = await startGuardedSvc({ flags: { 'compat-api-url': `${upstream.url}/v1` } });
  }

  it.each(STYLES)(
    "%s: a second client with another key does not get the first one's answer",
    async (_name, send) => {
      await setup();
      const ask = (key: string) => {
        const { headers, query } = send(key);
        return rawRequest(svc!.url, `/v1/chat/completions${query}`, { body, headers });
      };
      expect((await ask('sk-first')).status).toBe(200);
      expect((await ask('sk-first')).headers['x-service-cache']).toBe('HIT');
      expect(upstream!.requests).toHaveLength(1);
      const other = await ask('sk-wrong');
      expect(other.status).toBe(200);
      expect(other.headers['x-service-cache']).not.toBe('HIT');
      expect(upstream!.requests).toHaveLength(2);
    },
  );

  it('a request with no key shares nothing with a keyed one', async () => {
    await setup();
    expect(
      (await rawRequest(svc!.url, '/v1/chat/completions', { body, headers: { 'api-key': 'sk-1' } })).status,
    ).toBe(200);
    const anonymous = await rawRequest(svc!.url, '/v1/chat/completions', { body });
    expect(anonymous.status).toBe(200);
    expect(anonymous.headers['x-service-cache']).not.toBe('HIT');
    expect(upstream!.requests).toHaveLength(2);
  });

  it('another session (metadata) or end user (user) is not answered from the cache', async () => {
    await setup();
    const withFields = (fields: Record<string, unknown>) =>
      rawRequest(svc!.url, '/v1/chat/completions', {
        body: JSON.stringify({ ...JSON.parse(body), ...fields }),
        headers: { authorization: 'Bearer sk-1' },
      });
    await withFields({ metadata: { user_id: 'session-1' } });
    await withFields({ metadata: { user_id: 'session-2' } });
    await withFields({ user: 'alice' });
    await withFields({ user: 'bob' });
    expect(upstream!.requests).toHaveLength(4);
    expect((await withFields({ user: 'bob' })).headers['x-service-cache']).toBe('HIT');
  });
});

describe('the cache key of deep JSON (issue 15, item 7)', () => {
  const deep = (n: number, leaf: unknown): unknown => {
    let v = leaf;
    for (let i = 0; i < n; i++) v = i % 2 ? [v] : { a: v };
    return v;
  };

  it('a 10k-deep body does not overflow the stack, and equal bodies share a key', () => {
    const key = (leaf: unknown) =>
      responseCacheKey({
        path: '/v1/messages',
        body: { model: 'm', messages: deep(10_000, leaf) as never },
        keyHash: 'k',
      });
    expect(() => key(1)).not.toThrow();
    expect(key(1)).toBe(key(1));
    expect(key(1)).not.toBe(key(2));
  });

  it('deep and shallow values keep distinct material', () => {
    expect(canonicalJson(deep(100, 'x'))).not.toBe(canonicalJson(deep(100, 'y')));
    expect(canonicalJson(deep(3, 'x'))).toBe('{"a":[{"a":"x"}]}');
  });
});
