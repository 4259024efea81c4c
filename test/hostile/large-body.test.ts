import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { LargeBodyPool } from '../../src/server/large-body/pool.js';
import {
  type MockUpstream,
  postMessages,
  type ReadAnswer,
  replyJson,
  spawnServe,
  startMockUpstream,
  startSvc,
  type TestSvc,
  until,
} from '../server/helpers.js';
import { MESSAGES_REPLY } from '../server/sse-mocks.js';

/**
 * Issue 15 item 6: a large body is parsed, counted and compressed in a worker
 * thread, so the server keeps answering while it is processed; what goes
 * upstream is what the in-process path sends; a failing worker forwards the
 * original. The first two run the built CLI (`svc serve`, as users do: the
 * worker script is compiled), the last the server from src with a worker
 * that fails on purpose.
 */

const HEADERS = { 'content-type': 'application/json', 'x-api-key': 'k' };
const LINE = 'ERROR 2025-01-01T00:00:00Z service=api path=/v1/items/12345 status=500 latency=123ms retry=3\n';

/** A Claude Code style conversation of about `mb` MB: tool calls whose results are long logs. */
function logConversation(mb: number, withTools = false): string {
  const perResult = 150_000;
  const turns = Math.max(1, Math.ceil((mb * 1e6) / perResult));
  const messages: unknown[] = [{ role: 'user', content: 'Why does the build fail?' }];
  for (let i = 0; i < turns; i++) {
    messages.push({
      role: 'assistant',
      content: [{ type: 'tool_use', id: `toolu_${i}`, name: 'Bash', input: { command: `cat log-${i}.txt` } }],
    });
    const lines: string[] = [];
    for (let n = 0; lines.length * LINE.length < perResult; n++)
      lines.push(LINE.replace('12345', String(i * 1e5 + (n % 50))));
    messages.push({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: `toolu_${i}`, content: lines.join('') }],
    });
  }
  messages.push({ role: 'user', content: 'So?' });
  const tools = withTools
    ? [{ name: 'Bash', description: 'runs a command', input_schema: { type: 'object', properties: {} } }]
    : undefined;
  return JSON.stringify({
    model: 'claude-sonnet-4-5',
    max_tokens: 100,
    ...(tools ? { tools } : {}),
    messages,
  });
}

const children: ChildProcess[] = [];
const homes: string[] = [];
let upstream: MockUpstream | undefined;
let svc: TestSvc | undefined;
afterEach(async () => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
  for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true });
  await svc?.close();
  await upstream?.close();
  svc = upstream = undefined;
});

/** `svc serve` (the built CLI) on a loopback port, forwarding to the mock upstream. */
async function serve(flags: string[]): Promise<{ url: string; stderr: () => string }> {
  const proc = await spawnServe(upstream!.url, flags);
  children.push(proc.child);
  homes.push(proc.home);
  return proc;
}

function post(url: string, body: string): Promise<ReadAnswer> {
  return postMessages(url, body, HEADERS);
}

describe('large bodies (svc serve)', () => {
  it('a 6 MB body is read and compressed off the event loop: /health keeps answering meanwhile', async () => {
    upstream = await startMockUpstream((_r, res) => replyJson(res, 200, MESSAGES_REPLY));
    // no engine deadline: the engine does all its work on the body
    const { url, stderr } = await serve(['--log-level', 'debug', '--engine-timeout', '0']);
    expect((await post(url, logConversation(0.05))).status).toBe(200);
    const body = logConversation(6);
    let done = false;
    const latencies: number[] = [];
    const poll = (async () => {
      while (!done) {
        const t = performance.now();
        await (await fetch(`${url}/health`)).text();
        latencies.push(performance.now() - t);
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    const t0 = performance.now();
    const res = await post(url, body);
    const requestMs = performance.now() - t0;
    done = true;
    await poll;
    expect(res.status).toBe(200);
    // structurally: the worker read it, and it was compressed there
    expect(stderr()).toContain('request body read in the large-body worker');
    const sent = upstream.requests.at(-1)!.body;
    expect(sent.length).toBeLessThan(Buffer.byteLength(body) / 2);
    // /health answered all along: many times, and never for as long as a good part of the request
    // (in process, one poll waits for the whole parse and engine run)
    expect(latencies.length).toBeGreaterThanOrEqual(10);
    expect(Math.max(...latencies)).toBeLessThan(requestMs / 4);
  }, 60_000);

  it('forwards the same bytes with or without the worker, and stores the originals of its markers', async () => {
    upstream = await startMockUpstream((_r, res) => replyJson(res, 200, MESSAGES_REPLY));
    const body = logConversation(1.5, true);
    const flags = ['--engine-timeout', '0', '--no-cache'];
    const inProcess = await serve([...flags, '--large-body-bytes', '0']);
    const inWorker = await serve([...flags, '--large-body-bytes', '1000', '--log-level', 'debug']);
    expect((await post(inProcess.url, body)).status).toBe(200);
    expect((await post(inWorker.url, body)).status).toBe(200);
    expect(inWorker.stderr()).toContain('request body read in the large-body worker');
    const [a, b] = upstream.requests.map((r) => r.body.toString('utf8'));
    expect(a!.length).toBeLessThan(body.length);
    expect(a).toContain('"name":"svc_retrieve"');
    expect(b).toBe(a);
    // sent gzipped: decoded, then the same
    const zipped = await fetch(`${inWorker.url}/v1/messages`, {
      method: 'POST',
      headers: { ...HEADERS, 'content-encoding': 'gzip' },
      body: gzipSync(body),
    });
    expect(zipped.status).toBe(200);
    expect(upstream.requests[2]!.body.toString('utf8')).toBe(a);
    const hash = /retrieve with svc_retrieve hash=([0-9a-f]{24})/.exec(b!)?.[1];
    expect(hash).toBeDefined();
    const got = await fetch(`${inWorker.url}/v1/retrieve/${hash}`);
    expect(got.status).toBe(200);
    expect(JSON.stringify(await got.json())).toContain('service=api');
    // the same body again (a memoized turn: the memos give the same forwarded bytes): whole each time
    for (let i = 0; i < 2; i++) {
      expect((await post(inWorker.url, body)).status).toBe(200);
      expect(upstream.requests.at(-1)!.body.toString('utf8')).toBe(a);
    }
  }, 60_000);
});

describe('large bodies: cache-aware savings', () => {
  /** The mock's usage, turn by turn: turn 2 reads turn 1's cache writes (Anthropic fields). */
  const USAGE = [
    { input_tokens: 900, output_tokens: 40, cache_read_input_tokens: 0, cache_creation_input_tokens: 7000 },
    { input_tokens: 300, output_tokens: 40, cache_read_input_tokens: 7000, cache_creation_input_tokens: 900 },
  ];
  /** A mock upstream of its own that answers its n-th request with USAGE[n]. */
  function turnsUpstream(): Promise<MockUpstream> {
    let n = 0;
    return startMockUpstream((_r, res) => {
      const usage = USAGE[Math.min(n++, USAGE.length - 1)];
      replyJson(res, 200, { ...MESSAGES_REPLY, usage });
    });
  }
  type Cost = { cache_aware_requests: number; cache_aware_savings_usd: number };
  async function costOf(url: string, requests: number): Promise<Cost> {
    let cost: Cost | undefined;
    const read = async () => {
      cost = ((await (await fetch(`${url}/stats`)).json()) as { cost: Cost }).cost;
      return cost;
    };
    const end = Date.now() + 15_000;
    while ((await read()).cache_aware_requests < requests && Date.now() < end)
      await new Promise((r) => setTimeout(r, 50));
    return cost!;
  }

  it('a body the worker read gets the same estimate as in process (its shape comes back from the worker)', async () => {
    const turn1 = JSON.parse(logConversation(1.2, true)) as { messages: unknown[] };
    const turn2 = {
      ...turn1,
      messages: [
        ...turn1.messages,
        { role: 'assistant', content: [{ type: 'text', text: 'The items service fails with status 500.' }] },
        { role: 'user', content: 'Which item fails most?' },
      ],
    };
    const bodies = [JSON.stringify(turn1), JSON.stringify(turn2)];
    const flags = ['--engine-timeout', '0', '--no-cache'];
    upstream = await turnsUpstream();
    const first = upstream;
    const inProcess = await serve([...flags, '--large-body-bytes', '0']);
    upstream = await turnsUpstream();
    const inWorker = await serve([...flags, '--large-body-bytes', '1000', '--log-level', 'debug']);
    try {
      for (const body of bodies) {
        expect((await post(inProcess.url, body)).status).toBe(200);
        expect((await post(inWorker.url, body)).status).toBe(200);
      }
      expect(inWorker.stderr()).toContain('request body read in the large-body worker');
      // both compressed the same way (the estimate compares like with like)
      expect(upstream.requests.map((r) => r.body.toString('utf8'))).toEqual(
        first.requests.map((r) => r.body.toString('utf8')),
      );
      const a = await costOf(inProcess.url, 2);
      const b = await costOf(inWorker.url, 2);
      expect(a.cache_aware_requests).toBe(2);
      expect(a.cache_aware_savings_usd).toBeGreaterThan(0);
      expect(b.cache_aware_requests).toBe(a.cache_aware_requests);
      expect(b.cache_aware_savings_usd).toBeCloseTo(a.cache_aware_savings_usd, 12);
    } finally {
      await first.close();
    }
  }, 90_000);
});

describe('large bodies: POST /v1/compress', () => {
  it('answers the same with or without the worker, /health answering meanwhile; a bad body is still a 400', async () => {
    upstream = await startMockUpstream((_r, res) => replyJson(res, 200, MESSAGES_REPLY));
    const flags = ['--engine-timeout', '0'];
    const inProcess = await serve([...flags, '--large-body-bytes', '0']);
    const inWorker = await serve([...flags, '--large-body-bytes', '1000', '--log-level', 'debug']);
    const lines = LINE.repeat(4000);
    const messages: unknown[] = [{ role: 'user', content: 'Why does the build fail?' }];
    for (let i = 0; i < 12; i++) {
      const call = { id: `call_${i}`, type: 'function', function: { name: 'bash', arguments: '{}' } };
      messages.push({ role: 'assistant', content: null, tool_calls: [call] });
      messages.push({
        role: 'tool',
        tool_call_id: `call_${i}`,
        content: lines.replaceAll('12345', String(i)),
      });
    }
    messages.push({ role: 'user', content: 'So?' });
    const body = JSON.stringify({ model: 'gpt-4o', messages });
    const compress = (url: string, text: string) =>
      fetch(`${url}/v1/compress`, { method: 'POST', headers: HEADERS, body: text });
    const a = await compress(inProcess.url, body);
    let done = false;
    let polls = 0;
    const poll = (async () => {
      while (!done) {
        await (await fetch(`${inWorker.url}/health`)).text();
        polls += 1;
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    const b = await compress(inWorker.url, body);
    const [ta, tb] = [await a.text(), await b.text()];
    done = true;
    await poll;
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(inWorker.stderr()).toContain('/v1/compress body read in the large-body worker');
    const result = JSON.parse(tb) as { tokens_saved: number };
    expect(result.tokens_saved).toBeGreaterThan(0);
    expect(tb).toBe(ta);
    expect(polls).toBeGreaterThanOrEqual(3);
    // a body that is not a valid request: the same 400 as in process
    const bad = JSON.stringify({ model: 'gpt-4o', messages: [{ content: 'x'.repeat(5000) }] });
    const [ea, eb] = [await compress(inProcess.url, bad), await compress(inWorker.url, bad)];
    expect(eb.status).toBe(400);
    expect(await eb.text()).toBe(await ea.text());
  }, 60_000);
});

describe('large bodies: the guards see what the worker read', () => {
  it('cache: the same large body twice is answered from the cache the second time', async () => {
    upstream = await startMockUpstream((_r, res) => replyJson(res, 200, MESSAGES_REPLY));
    const { url, stderr } = await serve(['--large-body-bytes', '1000', '--log-level', 'debug']);
    const body = logConversation(0.2);
    const first = await post(url, body);
    const second = await post(url, body);
    expect(stderr()).toContain('request body read in the large-body worker');
    expect(first.headers.get('x-service-cache')).toBe('MISS');
    expect(second.headers.get('x-service-cache')).toBe('HIT');
    expect(upstream.requests).toHaveLength(1);
  }, 30_000);

  it('bypass: a large body with x-service-bypass is forwarded as sent and counted as bypass', async () => {
    upstream = await startMockUpstream((_r, res) => replyJson(res, 200, MESSAGES_REPLY));
    const { url } = await serve(['--large-body-bytes', '1000', '--no-cache']);
    const body = logConversation(0.2);
    const res = await fetch(`${url}/v1/messages`, {
      method: 'POST',
      headers: { ...HEADERS, 'x-service-bypass': 'true' },
      body,
    });
    expect(res.status).toBe(200);
    expect(upstream.requests[0]!.body.toString('utf8')).toBe(body);
    const stats = (await (await fetch(`${url}/stats`)).json()) as {
      requests: { by_mode: Record<string, number> };
    };
    expect(stats.requests.by_mode.bypass).toBe(1);
  }, 30_000);

  it('rate limit: the tokens the worker counted are charged (429 over --rate-limit-tpm)', async () => {
    // no usage in the answer: the bucket keeps the estimate, the tokens the worker counted
    upstream = await startMockUpstream((_r, res) =>
      replyJson(res, 200, { ...MESSAGES_REPLY, usage: undefined }),
    );
    const { url } = await serve(['--large-body-bytes', '1000', '--rate-limit-tpm', '1000', '--no-cache']);
    // the first passes with a full bucket and leaves a debt of its tokens; the next is refused for it
    expect((await post(url, logConversation(0.2))).status).toBe(200);
    const res = await fetch(`${url}/v1/messages`, {
      method: 'POST',
      headers: HEADERS,
      body: logConversation(0.1),
    });
    expect(res.status).toBe(429);
    expect(await res.text()).toMatch(/token/i);
    expect(upstream.requests).toHaveLength(1);
  }, 30_000);

  it('budget: the model the worker read is priced (an unpriced one is refused, 402)', async () => {
    upstream = await startMockUpstream((_r, res) => replyJson(res, 200, MESSAGES_REPLY));
    const { url } = await serve(['--large-body-bytes', '1000', '--budget', '5']);
    const body = logConversation(0.2).replace('"claude-sonnet-4-5"', '"no-such-model-7"');
    const res = await fetch(`${url}/v1/messages`, { method: 'POST', headers: HEADERS, body });
    expect(res.status).toBe(402);
    expect(await res.text()).toContain('no-such-model-7');
    expect(upstream.requests).toHaveLength(0);
  }, 30_000);
});

describe('large bodies: a failing worker', () => {
  it('a worker that does not answer is ended after the read timeout; the original goes, counted', async () => {
    upstream = await startMockUpstream((_r, res) => replyJson(res, 200, MESSAGES_REPLY));
    svc = await startSvc({ flags: { 'messages-api-url': `${upstream.url}/v1` } });
    const ctx = svc.server.ctx;
    const pool = new LargeBodyPool(
      { ...ctx.config, largeBodyBytes: 10_000 },
      ctx.logger,
      new URL('./fixtures/worker-hangs.mjs', import.meta.url),
      300,
    );
    ctx.largeBodies = pool;
    const body = logConversation(0.1);
    const res = await post(svc.url, body);
    expect(res.status).toBe(200);
    expect(upstream.requests[0]!.body.toString('utf8')).toBe(body);
    expect(pool.stats.failures).toBe(1);
    await until(() => svc!.events.length === 1);
    expect(svc.events[0]!.compressionFailed).toBe(true);
    // the next large body starts a new worker
    await post(svc.url, body);
    expect(pool.stats.started).toBe(2);
    await pool.close();
  });

  for (const [fixture, phase] of [
    ['worker-exits.mjs', 'reading'],
    ['worker-dies-compressing.mjs', 'compressing'],
  ] as const) {
    it(`forwards the original bytes and counts the failure when the worker dies ${phase}`, async () => {
      upstream = await startMockUpstream((_r, res) => replyJson(res, 200, MESSAGES_REPLY));
      svc = await startSvc({ flags: { 'messages-api-url': `${upstream.url}/v1` } });
      const ctx = svc.server.ctx;
      const pool = new LargeBodyPool(
        { ...ctx.config, largeBodyBytes: 10_000 },
        ctx.logger,
        new URL(`./fixtures/${fixture}`, import.meta.url),
      );
      ctx.largeBodies = pool;
      const body = logConversation(0.1);
      const res = await post(svc.url, body);
      expect(res.status).toBe(200);
      expect(upstream.requests[0]!.body.toString('utf8')).toBe(body);
      expect(pool.stats.failures).toBe(1);
      await until(() => svc!.events.length === 1);
      expect(svc.events[0]!.compressionFailed).toBe(true);
      const stats = (await (await fetch(`${svc.url}/stats`)).json()) as {
        requests: { compression_failed: number };
      };
      expect(stats.requests.compression_failed).toBe(1);
      await pool.close();
    });
  }
});
