import { inspect } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  CLIENT_DEFAULTS,
  CompressionClient,
  compress,
  isSvcClientError,
  SvcAuthError,
  SvcClientError,
  SvcCompressError,
  SvcConnectionError,
  SvcNotFoundError,
} from '../../packages/client/src/index.js';
import { closedPortUrl, type MockServer, sendJson, startMock, wireResult } from './helpers.js';

const MESSAGES = [
  { role: 'user', content: 'list the files' },
  {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'c1', type: 'function', function: { name: 'ls', arguments: '{}' } }],
  },
  { role: 'tool', tool_call_id: 'c1', content: 'a.txt\nb.txt\nc.txt' },
];
const COMPRESSED = [MESSAGES[0], MESSAGES[1], { role: 'tool', tool_call_id: 'c1', content: '[3 files]' }];

/** No real waits: backoff delays are recorded instead. */
function instantSleep(delays: number[] = []) {
  return async (ms: number) => {
    delays.push(ms);
  };
}

const servers: MockServer[] = [];
async function mock(handler: Parameters<typeof startMock>[0]) {
  const server = await startMock(handler);
  servers.push(server);
  return server;
}
afterEach(async () => {
  vi.unstubAllEnvs();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

type ErrorClass = abstract new (...args: never[]) => SvcClientError;

type Scenario = {
  name: string;
  /** Starts what the client talks to; returns its base URL and a request counter. */
  start: () => Promise<{ url: string; attempts: () => number }>;
  timeout?: number;
  /** With fallback on: 'fallback' or the error class thrown. */
  withFallback: 'fallback' | ErrorClass;
  withoutFallback: ErrorClass;
  status?: number;
  attempts: number | null;
};

const SCENARIOS: Scenario[] = [
  {
    name: 'service unreachable (closed port)',
    start: async () => ({ url: await closedPortUrl(), attempts: () => 0 }),
    withFallback: 'fallback',
    withoutFallback: SvcConnectionError,
    attempts: null,
  },
  {
    name: 'slow service past the timeout',
    start: async () => {
      const s = await mock(() => new Promise((resolve) => setTimeout(resolve, 5_000).unref()));
      return { url: s.url, attempts: () => s.received.length };
    },
    timeout: 150,
    withFallback: 'fallback',
    withoutFallback: SvcConnectionError,
    // The timeout bounds the whole call: no retry after it ran out.
    attempts: 1,
  },
  {
    name: '5xx from the service',
    start: async () => {
      const s = await mock((_req, res) => sendJson(res, 503, { error: { message: 'compression failed' } }));
      return { url: s.url, attempts: () => s.received.length };
    },
    withFallback: 'fallback',
    withoutFallback: SvcCompressError,
    status: 503,
    attempts: 2,
  },
  {
    name: '401',
    start: async () => {
      const s = await mock((_req, res) => sendJson(res, 401, { error: { message: 'invalid api key' } }));
      return { url: s.url, attempts: () => s.received.length };
    },
    withFallback: SvcAuthError,
    withoutFallback: SvcAuthError,
    status: 401,
    attempts: 1,
  },
  {
    name: '400',
    start: async () => {
      const s = await mock((_req, res) =>
        sendJson(res, 400, { error: { message: 'messages must be an array' } }),
      );
      return { url: s.url, attempts: () => s.received.length };
    },
    withFallback: SvcCompressError,
    withoutFallback: SvcCompressError,
    status: 400,
    attempts: 1,
  },
];

describe('client behaviour table (spec section 7), both fallback settings', () => {
  for (const sc of SCENARIOS) {
    for (const fallback of [true, false]) {
      const expected = fallback ? sc.withFallback : sc.withoutFallback;
      it(`${sc.name}, fallback: ${fallback} -> ${expected === 'fallback' ? 'original messages' : expected.name}`, async () => {
        const { url, attempts } = await sc.start();
        const client = new CompressionClient({
          baseUrl: url,
          fallback,
          timeout: sc.timeout,
          sleep: instantSleep(),
        });
        if (expected === 'fallback') {
          const result = await client.compress(MESSAGES, { model: 'gpt-4o' });
          expect(result).toMatchObject({
            compressed: false,
            tokensBefore: null,
            tokensAfter: null,
            tokensSaved: 0,
            compressionRatio: 1,
            transformsApplied: [],
            ccrHashes: [],
          });
          expect(result.messages).toBe(MESSAGES);
          expect(result.error).toBeInstanceOf(sc.withoutFallback);
          if (sc.status) expect(result.error?.status).toBe(sc.status);
        } else {
          const err = await client.compress(MESSAGES).catch((e: unknown) => e);
          expect(err).toBeInstanceOf(expected);
          expect(err).toBeInstanceOf(SvcClientError);
          if (sc.status) expect((err as SvcClientError).status).toBe(sc.status);
        }
        if (sc.attempts !== null) expect(attempts()).toBe(sc.attempts);
      });
    }
  }

  it('a timeout is a connection error that says so', async () => {
    const { url } = await SCENARIOS[1]!.start();
    const err = await compress(MESSAGES, { baseUrl: url, timeout: 100, fallback: false }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SvcConnectionError);
    expect((err as SvcConnectionError).timedOut).toBe(true);
    expect((err as Error).message).toMatch(/timed out after 100 ms/);
  });

  for (const fallback of [true, false]) {
    it(`500 then 200, fallback: ${fallback}: retried once, then the compressed result`, async () => {
      const s = await mock((_req, res, i) =>
        i === 0
          ? sendJson(res, 500, { error: { message: 'boom' } })
          : sendJson(res, 200, wireResult(COMPRESSED)),
      );
      const delays: number[] = [];
      const result = await compress(MESSAGES, {
        baseUrl: s.url,
        fallback,
        model: 'gpt-4o',
        sleep: instantSleep(delays),
      });
      expect(result).toEqual({
        messages: COMPRESSED,
        tokensBefore: 100,
        tokensAfter: 40,
        tokensSaved: 60,
        compressionRatio: 0.4,
        transformsApplied: ['router:json:0.40'],
        ccrHashes: ['3fa9c2e1b4d5a6f7c8d9e0a1'],
        compressed: true,
      });
      expect(s.received).toHaveLength(2);
      expect(s.received[1]!.json).toEqual({ messages: MESSAGES, model: 'gpt-4o' });
      expect(delays).toHaveLength(1);
    });
  }
});

describe('retries', () => {
  it('retries=N means N+1 attempts, with exponential backoff and jitter', async () => {
    const s = await mock((_req, res) => sendJson(res, 502, { error: { message: 'bad gateway' } }));
    const delays: number[] = [];
    const randoms = [0, 0.9999, 0.5];
    const err = await compress(MESSAGES, {
      baseUrl: s.url,
      fallback: false,
      retries: 3,
      sleep: instantSleep(delays),
      random: () => randoms.shift() ?? 0,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SvcCompressError);
    expect((err as SvcClientError).attempts).toBe(4);
    expect(s.received).toHaveLength(4);
    // step 250 * 2^n, scaled by 0.5 + random/2
    expect(delays).toEqual([125, 500, 750]);
  });

  for (const [retries, attempts] of [
    [undefined, 2],
    [0, 1],
    [2, 3],
  ] as const) {
    it(`retries: ${retries ?? 'default'} -> ${attempts} attempts against a closed port`, async () => {
      const url = await closedPortUrl();
      const delays: number[] = [];
      const err = await compress(MESSAGES, {
        baseUrl: url,
        fallback: false,
        retries,
        sleep: instantSleep(delays),
      }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SvcConnectionError);
      expect((err as SvcClientError).attempts).toBe(attempts);
      expect(delays).toHaveLength(attempts - 1);
    });
  }

  it('honours Retry-After when it is longer than the backoff', async () => {
    const s = await mock((_req, res, i) =>
      i === 0
        ? sendJson(res, 503, { error: { message: 'busy' } }, { 'retry-after': '2' })
        : sendJson(res, 200, wireResult(MESSAGES)),
    );
    const delays: number[] = [];
    const result = await compress(MESSAGES, { baseUrl: s.url, sleep: instantSleep(delays), random: () => 0 });
    expect(result.compressed).toBe(true);
    expect(delays).toEqual([2000]);
  });

  it('uses real (abortable) waits by default and stops waiting at the deadline', async () => {
    const s = await mock((_req, res) =>
      sendJson(res, 503, { error: { message: 'busy' } }, { 'retry-after': '60' }),
    );
    const started = Date.now();
    const err = await compress(MESSAGES, { baseUrl: s.url, timeout: 200, fallback: false }).catch(
      (e: unknown) => e,
    );
    expect(Date.now() - started).toBeLessThan(5_000);
    // The error is the 503 that made it wait, not the timeout.
    expect(err).toBeInstanceOf(SvcCompressError);
    expect((err as SvcClientError).status).toBe(503);
    expect(s.received).toHaveLength(1);
  });

  it('429 is transient (retried); 404 and 413 are not', async () => {
    for (const [status, attempts] of [
      [429, 2],
      [404, 1],
      [413, 1],
    ] as const) {
      const s = await mock((_req, res) => sendJson(res, status, { error: { message: `status ${status}` } }));
      const err = await compress(MESSAGES, { baseUrl: s.url, fallback: false, sleep: instantSleep() }).catch(
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(SvcCompressError);
      expect((err as SvcClientError).status).toBe(status);
      expect(s.received).toHaveLength(attempts);
    }
  });
});

describe('defaults and environment', () => {
  it('baseUrl and apiKey come from SERVICE_BASE_URL and SERVICE_API_KEY', async () => {
    const s = await mock((_req, res) => sendJson(res, 200, wireResult(MESSAGES)));
    vi.stubEnv('SERVICE_BASE_URL', `${s.url}/`);
    vi.stubEnv('SERVICE_API_KEY', 'sk-from-env');
    const result = await compress(MESSAGES, { model: 'gpt-4o' });
    expect(result.compressed).toBe(true);
    expect(s.received[0]!.url).toBe('/v1/compress');
    expect(s.received[0]!.headers.authorization).toBe('Bearer sk-from-env');
    expect(new CompressionClient().baseUrl).toBe(s.url);
  });

  it('options beat the environment', async () => {
    const s = await mock((_req, res) => sendJson(res, 200, wireResult(MESSAGES)));
    vi.stubEnv('SERVICE_BASE_URL', await closedPortUrl());
    vi.stubEnv('SERVICE_API_KEY', 'sk-from-env');
    await compress(MESSAGES, { baseUrl: s.url, apiKey: 'sk-option' });
    expect(s.received[0]!.headers.authorization).toBe('Bearer sk-option');
  });

  it('without env: http://localhost:8787, no key, timeout 30000, fallback on, retries 1', async () => {
    vi.stubEnv('SERVICE_BASE_URL', '');
    vi.stubEnv('SERVICE_API_KEY', '');
    expect(new CompressionClient().baseUrl).toBe('http://localhost:8787');
    expect(new CompressionClient().fallback).toBe(true);
    expect(CLIENT_DEFAULTS).toEqual({
      baseUrl: 'http://localhost:8787',
      timeout: 30_000,
      fallback: true,
      retries: 1,
    });
    // No key: no authorization header at all.
    const s = await mock((_req, res) => sendJson(res, 200, wireResult(MESSAGES)));
    await compress(MESSAGES, { baseUrl: s.url });
    expect(s.received[0]!.headers.authorization).toBeUndefined();
    // The default timeout is not short: a 300 ms answer arrives.
    const slow = await mock((_req, res) => setTimeout(() => sendJson(res, 200, wireResult(COMPRESSED)), 300));
    expect((await compress(MESSAGES, { baseUrl: slow.url })).compressed).toBe(true);
  });

  it('sends model only when given, and the bypass header on request', async () => {
    const s = await mock((_req, res) => sendJson(res, 200, wireResult(MESSAGES)));
    const client = new CompressionClient({ baseUrl: s.url });
    await client.compress(MESSAGES);
    await client.compress(MESSAGES, { model: 'claude-sonnet-4-5', bypass: true });
    expect(s.received[0]!.json).toEqual({ messages: MESSAGES });
    expect(s.received[0]!.headers['x-service-bypass']).toBeUndefined();
    expect(s.received[1]!.json).toEqual({ messages: MESSAGES, model: 'claude-sonnet-4-5' });
    expect(s.received[1]!.headers['x-service-bypass']).toBe('true');
  });

  it.each([
    [{ timeout: 0 }, /timeout must be/],
    [{ timeout: Number.NaN }, /timeout must be/],
    [{ retries: 1.5 }, /retries must be an integer/],
    [{ retries: -1 }, /retries must be an integer/],
    [{ baseUrl: 'ftp://example' }, /baseUrl must use http or https/],
    [{ baseUrl: 'not a url' }, /baseUrl must be an http\(s\) URL/],
    [{ baseUrl: 'http://user:pw@127.0.0.1:1' }, /must not hold credentials/],
    [{ fallback: 'yes' as unknown as boolean }, /fallback must be true or false/],
  ])('rejects bad option %o', (options, message) => {
    expect(() => new CompressionClient(options)).toThrow(message);
    try {
      new CompressionClient(options);
    } catch (err) {
      expect((err as SvcClientError).code).toBe('SVC_CLIENT_BAD_OPTION');
    }
  });
});

describe('errors', () => {
  it('share one base class and carry the status and the server message', async () => {
    const s = await mock((_req, res) =>
      sendJson(res, 400, { error: { message: 'messages[2].role must be a string' } }),
    );
    const err = (await compress(MESSAGES, { baseUrl: s.url }).catch((e: unknown) => e)) as SvcClientError;
    expect(err).toBeInstanceOf(SvcCompressError);
    expect(err).toBeInstanceOf(SvcClientError);
    expect(err).toBeInstanceOf(Error);
    expect(isSvcClientError(err)).toBe(true);
    expect(err).toMatchObject({
      name: 'SvcCompressError',
      code: 'SVC_CLIENT_COMPRESS',
      status: 400,
      serverMessage: 'messages[2].role must be a string',
      transient: false,
    });
    expect(err.message).toBe('svc POST /v1/compress answered 400: messages[2].role must be a string');
  });

  it('read the message from a messages-format error body and from plain text', async () => {
    const s = await mock((_req, res, i) => {
      if (i === 0)
        return sendJson(res, 401, {
          type: 'error',
          error: { type: 'authentication_error', message: 'no key' },
        });
      res.writeHead(400, { 'content-type': 'text/plain' }).end('model is required\n');
    });
    const auth = (await compress(MESSAGES, { baseUrl: s.url }).catch((e: unknown) => e)) as SvcClientError;
    expect(auth).toMatchObject({ code: 'SVC_CLIENT_AUTH', status: 401, serverMessage: 'no key' });
    const bad = (await compress(MESSAGES, { baseUrl: s.url }).catch((e: unknown) => e)) as SvcClientError;
    expect(bad).toMatchObject({ status: 400, serverMessage: 'model is required' });
  });

  it('never include the API key, even when the server echoes it', async () => {
    const key = 'sk-secret-0123456789abcdef';
    const echo = await mock((req, res) =>
      sendJson(res, req.url === '/v1/compress' && req.headers['x-mode'] === '401' ? 401 : 503, {
        error: { message: `rejected ${req.headers.authorization} (key ${key})` },
      }),
    );
    const closed = await closedPortUrl();
    const slow = await mock(() => new Promise((r) => setTimeout(r, 5_000).unref()));
    const errors = [
      await compress(MESSAGES, { baseUrl: echo.url, apiKey: key, headers: { 'x-mode': '401' } }).catch(
        (e) => e,
      ),
      await compress(MESSAGES, {
        baseUrl: echo.url,
        apiKey: key,
        fallback: false,
        sleep: instantSleep(),
      }).catch((e) => e),
      (await compress(MESSAGES, { baseUrl: echo.url, apiKey: key, sleep: instantSleep() })).error,
      await compress(MESSAGES, {
        baseUrl: closed,
        apiKey: key,
        fallback: false,
        sleep: instantSleep(),
      }).catch((e) => e),
      await compress(MESSAGES, { baseUrl: slow.url, apiKey: key, fallback: false, timeout: 100 }).catch(
        (e) => e,
      ),
    ];
    expect(echo.received[0]!.headers.authorization).toBe(`Bearer ${key}`);
    for (const err of errors) {
      expect(err).toBeInstanceOf(SvcClientError);
      const shown = [
        err.message,
        err.serverMessage ?? '',
        err.stack ?? '',
        JSON.stringify(err),
        inspect(err, { depth: Number.POSITIVE_INFINITY, showHidden: true }),
      ].join('\n');
      expect(shown).not.toContain(key);
    }
    expect(errors[0].serverMessage).toBe('rejected Bearer [redacted] (key [redacted])');
    const client = new CompressionClient({ apiKey: key });
    expect(inspect(client, { depth: Number.POSITIVE_INFINITY, showHidden: true })).not.toContain(key);
    expect(JSON.stringify(client)).not.toContain(key);
  });

  it('an unreadable 2xx answer is transient: fallback returns the originals, else a compress error', async () => {
    const s = await mock((_req, res, i) =>
      i % 2 === 0
        ? sendJson(res, 200, { messages: 'nope' })
        : res.writeHead(200, { 'content-type': 'application/json' }).end('{'),
    );
    for (const fallback of [true, false, true, false]) {
      const outcome = await compress(MESSAGES, { baseUrl: s.url, fallback }).catch((e: unknown) => e);
      if (fallback) expect(outcome).toMatchObject({ compressed: false, messages: MESSAGES });
      else expect(outcome).toBeInstanceOf(SvcCompressError);
    }
    expect(s.received).toHaveLength(4);
  });

  it('a cancelled call rejects with the signal reason, never a fallback', async () => {
    const s = await mock(() => new Promise((r) => setTimeout(r, 5_000).unref()));
    const controller = new AbortController();
    const reason = new Error('user cancelled');
    setTimeout(() => controller.abort(reason), 50);
    const client = new CompressionClient({ baseUrl: s.url, fallback: true });
    await expect(client.compress(MESSAGES, { signal: controller.signal })).rejects.toBe(reason);
  });

  it('rejects a non-array messages argument without a request', async () => {
    const client = new CompressionClient({ baseUrl: await closedPortUrl() });
    await expect(client.compress('hi' as never)).rejects.toMatchObject({ code: 'SVC_CLIENT_BAD_OPTION' });
  });
});

describe('retrieve(hash)', () => {
  it('GET /v1/retrieve/:hash returns the original; 404 is SvcNotFoundError', async () => {
    const s = await mock((req, res) => {
      if (req.url === '/v1/retrieve/3fa9c2e1b4d5a6f7c8d9e0a1') {
        return sendJson(res, 200, { hash: '3fa9c2e1b4d5a6f7c8d9e0a1', content: 'a.txt\nb.txt\nc.txt' });
      }
      if (req.url === '/v1/retrieve/plain')
        return res.writeHead(200, { 'content-type': 'text/plain' }).end('raw original');
      sendJson(res, 404, { error: { message: 'unknown or expired hash' } });
    });
    const client = new CompressionClient({ baseUrl: s.url, apiKey: 'sk-r' });
    expect(await client.retrieve('3fa9c2e1b4d5a6f7c8d9e0a1')).toEqual({
      hash: '3fa9c2e1b4d5a6f7c8d9e0a1',
      content: 'a.txt\nb.txt\nc.txt',
    });
    expect(s.received[0]!.method).toBe('GET');
    expect(s.received[0]!.headers.authorization).toBe('Bearer sk-r');
    expect(await client.retrieve('plain')).toEqual({ hash: 'plain', content: 'raw original' });
    const err = await client.retrieve('ffffffffffffffffffffffff').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SvcNotFoundError);
    expect(err).toMatchObject({
      status: 404,
      serverMessage: 'unknown or expired hash',
      code: 'SVC_CLIENT_NOT_FOUND',
    });
  });

  it('has no fallback: an unreachable service throws', async () => {
    const client = new CompressionClient({ baseUrl: await closedPortUrl(), sleep: instantSleep() });
    await expect(client.retrieve('abc')).rejects.toBeInstanceOf(SvcConnectionError);
  });
});
