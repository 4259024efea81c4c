import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rng } from '../engine/helpers.js';
import {
  type MockUpstream,
  replyJson,
  startMockUpstream,
  startSvc,
  type TestSvc,
} from '../server/helpers.js';
import { CHAT_REPLY, MESSAGES_REPLY } from '../server/sse-mocks.js';
import { pathologicalStrings } from './pathological.js';
import { rawRequest } from './raw-http.js';

/*
 * Issue 15: a seeded fuzz run over every POST route (the two proxy formats,
 * /v1/compress, /v1/retrieve, a pass-through path), with pathological
 * strings, broken JSON, wrong types, deep nesting and odd paths, through the
 * real engine with the context manager on (a small context limit). Bounded:
 * 2000 requests, 8 at a time, each given 15 s. Must hold: no hang, no 5xx,
 * no dropped connection.
 */
const SEED = 15;
const REQUESTS = 2000;
const CONCURRENCY = 8;
const PER_REQUEST_MS = 15_000;

const ROUTES = [
  '/v1/chat/completions',
  '/v1/messages',
  '/v1/compress',
  '/v1/retrieve',
  '/v1/embeddings',
] as const;
const ODD_PATHS: Record<string, string[]> = {
  '/v1/chat/completions': [
    '/v1/./chat/completions',
    '/v1//chat/completions',
    '/v1/messages/../chat/completions',
  ],
  '/v1/messages': ['/v1/messages/', '/v1/%6dessages'],
  '/v1/compress': ['/v1/./compress'],
  '/v1/retrieve': ['/v1/retrieve/'],
  '/v1/embeddings': ['/v1/../../admin', '/v1/%2e%2e/x', '/v1/embeddings%2f..'],
};

function pick<T>(rand: () => number, items: readonly T[]): T {
  return items[Math.floor(rand() * items.length)]!;
}

/** A random text: a pathological string (cut to a random size), or plain words. */
function textOf(rand: () => number, corpus: ReadonlyArray<[string, string]>): string {
  if (rand() < 0.3) return `please look at item ${Math.floor(rand() * 1000)} and tell me what failed`;
  const [, text] = pick(rand, corpus);
  const size = rand() < 0.1 ? 40_000 : Math.floor(rand() * 4000);
  return text.slice(0, size);
}

/** Messages in the chat or messages format: tool rounds carrying random texts. */
function conversation(
  rand: () => number,
  corpus: ReadonlyArray<[string, string]>,
  format: 'chat' | 'messages',
): unknown[] {
  const out: unknown[] = [{ role: 'user', content: textOf(rand, corpus) }];
  const rounds = Math.floor(rand() * 4);
  for (let i = 0; i < rounds; i++) {
    const id = `call_${i}`;
    const output = textOf(rand, corpus);
    if (format === 'chat') {
      out.push(
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id,
              type: 'function',
              function: {
                name: 'bash',
                arguments: JSON.stringify({ cmd: textOf(rand, corpus).slice(0, 500) }),
              },
            },
          ],
        },
        { role: 'tool', tool_call_id: id, content: output },
      );
    } else {
      out.push(
        { role: 'assistant', content: [{ type: 'tool_use', id, name: 'bash', input: { cmd: 'ls' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: output }] },
      );
    }
  }
  out.push({ role: 'user', content: textOf(rand, corpus) });
  return out;
}

/** A body for `route`: mostly well formed, sometimes broken in one of many ways. */
function bodyFor(rand: () => number, corpus: ReadonlyArray<[string, string]>, route: string): string {
  const format = route === '/v1/messages' ? 'messages' : 'chat';
  const r = rand();
  if (r < 0.05) return textOf(rand, corpus); // not JSON
  if (r < 0.08) return `{"model":"gpt-4o","messages":[${'['.repeat(10_000)}`; // truncated deep JSON
  if (r < 0.11)
    return `{"model":"gpt-4o","messages":[{"role":"user","content":${'['.repeat(10_000)}1${']'.repeat(10_000)}}]}`;
  if (r < 0.14) return JSON.stringify({ model: 7, messages: 'not an array', max_tokens: 'x' });
  if (r < 0.17)
    return JSON.stringify({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: [{ type: 'image', source: null }] }, null, 3],
    });
  if (r < 0.2) return JSON.stringify([1, 2, 3]);
  if (route === '/v1/retrieve') {
    return JSON.stringify(
      rand() < 0.5
        ? { hash: textOf(rand, corpus).slice(0, 100) }
        : { hash: 'abc', query: textOf(rand, corpus) },
    );
  }
  const body: Record<string, unknown> = {
    model: pick(rand, ['gpt-4o', 'claude-sonnet-4-5', 'unknown-model', '']),
    messages: conversation(rand, corpus, format),
    max_tokens: pick(rand, [100, 1, 0, -5, 1e12]),
  };
  if (rand() < 0.2) body.metadata = { user_id: textOf(rand, corpus).slice(0, 300) };
  if (rand() < 0.2) body.system = textOf(rand, corpus);
  return JSON.stringify(body);
}

let svc: TestSvc;
let upstream: MockUpstream;
beforeAll(async () => {
  upstream = await startMockUpstream((req, res) =>
    replyJson(res, 200, req.url.startsWith('/v1/messages') ? MESSAGES_REPLY : CHAT_REPLY),
  );
  svc = await startSvc({
    flags: {
      'compat-api-url': `${upstream.url}/v1`,
      'messages-api-url': `${upstream.url}/v1`,
      'context-limit': 4000,
      'rate-limit': false,
    },
  });
});
afterAll(async () => {
  await svc?.close();
  await upstream?.close();
});

describe('fuzzing every POST route (issue 15)', () => {
  it(`${REQUESTS} seeded requests: no hang, no 5xx, no dropped connection`, async () => {
    const rand = rng(SEED);
    const corpus = pathologicalStrings(40_000);
    const jobs = Array.from({ length: REQUESTS }, (_, i) => {
      const route = pick(rand, ROUTES);
      const path = rand() < 0.1 ? pick(rand, ODD_PATHS[route]!) : route;
      const headers: Record<string, string> = rand() < 0.5 ? { authorization: `Bearer sk-${i % 5}` } : {};
      if (rand() < 0.05) headers['content-encoding'] = 'gzip';
      return { i, path, body: bodyFor(rand, corpus, route), headers };
    });
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    let next = 0;
    const worker = async () => {
      while (next < jobs.length) {
        const job = jobs[next++]!;
        const timeout = new Promise<'hang'>((r) => setTimeout(() => r('hang'), PER_REQUEST_MS).unref());
        try {
          const res = await Promise.race([
            rawRequest(svc.url, job.path, { body: job.body, headers: job.headers }),
            timeout,
          ]);
          if (res === 'hang') failures.push(`#${job.i} ${job.path}: no answer in ${PER_REQUEST_MS} ms`);
          else {
            statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
            if (res.status >= 500)
              failures.push(`#${job.i} ${job.path}: ${res.status} ${res.body.slice(0, 200)}`);
          }
        } catch (err) {
          failures.push(`#${job.i} ${job.path}: connection dropped (${(err as Error).message})`);
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    expect(failures).toEqual([]);
    // the run exercised both the success and the refusal paths
    expect(statuses.get(200)).toBeGreaterThan(REQUESTS / 4);
    expect(statuses.get(400)).toBeGreaterThan(0);
    const health = await rawRequest(svc.url, '/health');
    expect(health.status).toBe(200);
  }, 240_000);
});
