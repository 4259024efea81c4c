import { afterEach, describe, expect, it } from 'vitest';
import { SvcError } from '../../src/errors.js';
import { applyJsonEdits, JsonEdits } from '../../src/formats/index.js';
import { type ProxyExchange, ProxyPipeline, type ProxyStage } from '../../src/server/proxy/pipeline.js';
import { chatBody, messagesBody } from '../formats/bodies.js';
import { createFakeCompress } from './fake-engine.js';
import { type MockUpstream, replyJson, startMockUpstream, startSvc, type TestSvc, until } from './helpers.js';
import { CHAT_REPLY, MESSAGES_REPLY } from './sse-mocks.js';

let svc: TestSvc | undefined;
let upstream: MockUpstream | undefined;
afterEach(async () => {
  await svc?.close();
  await upstream?.close();
  svc = upstream = undefined;
});

async function setup(reply: unknown = MESSAGES_REPLY, flags: Record<string, unknown> = {}) {
  upstream = await startMockUpstream((_r, res) => replyJson(res, 200, reply));
  svc = await startSvc({
    compress: createFakeCompress(),
    flags: { 'messages-api-url': `${upstream.url}/v1`, 'compat-api-url': `${upstream.url}/v1`, ...flags },
  });
  return svc.server.ctx.pipeline;
}

const post = (path: string, body: unknown) =>
  fetch(`${svc!.url}${path}`, { method: 'POST', body: JSON.stringify(body) });

describe('the request pipeline seam', () => {
  it('stages run in order: parse, compress, splice, forward, relay', async () => {
    const pipeline = await setup();
    // With the guards and the retrieval loop wired: rate limit, cache lookup and budget before compress;
    // the retrieval tool before forward, its loop after; the cache stores the final answer before relay.
    expect(pipeline.stages.map((s) => s.name)).toEqual([
      'parse',
      'accounting', // after the response: retrieval rounds, the cache-aware estimate, --observe
      'guards',
      'compress',
      'splice',
      'retrieval-tool',
      'forward',
      'retrieval-loop',
      'cache-record',
      'relay',
    ]);
    expect(() => pipeline.insert({ name: 'x', run: async () => undefined }, { before: 'nope' })).toThrow(
      /nope/,
    );
  });

  it('a guard before compress can reject in the provider shape; the upstream is not called', async () => {
    const pipeline = await setup();
    const guard: ProxyStage = {
      name: 'rate-limit',
      async run(ex) {
        ex.event.rateLimited = true;
        throw new SvcError('SVC_RATE_LIMITED', 'slow down', { details: { retry_after_s: 3 } });
      },
    };
    pipeline.insert(guard, { before: 'compress' });
    const res = await post('/v1/messages', messagesBody());
    expect(res.status).toBe(429);
    expect(await res.json()).toEqual({
      type: 'error',
      error: { type: 'rate_limit_error', message: 'slow down' },
    });
    expect(upstream!.requests).toHaveLength(0);
    await until(() => svc!.events.length === 1);
    expect(svc!.events[0]).toMatchObject({ status: 429, rateLimited: true, errorCode: 'SVC_RATE_LIMITED' });
  });

  it('a cache stage can answer a hit itself and store misses from responseTaps/onFinish', async () => {
    // --no-cache: the wired response cache would answer the repeat before this stage.
    const pipeline = await setup(CHAT_REPLY, { cache: false });
    const store = new Map<string, Buffer>();
    const cache: ProxyStage = {
      name: 'cache',
      async run(ex, next) {
        const key = ex.text ?? '';
        const hit = store.get(key);
        if (hit) {
          ex.event.mode = 'cached';
          ex.event.cached = true;
          ex.event.status = 200;
          ex.res.writeHead(200, { 'content-type': 'application/json', 'x-cache': 'hit' });
          ex.res.end(hit);
          return;
        }
        const chunks: Buffer[] = [];
        ex.responseTaps.push((c) => chunks.push(c));
        ex.onFinish.push((done: ProxyExchange) => {
          if (done.event.status === 200) store.set(key, Buffer.concat(chunks));
        });
        await next();
      },
    };
    pipeline.insert(cache, { before: 'compress' });
    const first = await post('/v1/chat/completions', chatBody());
    expect(await first.json()).toEqual(CHAT_REPLY);
    const second = await post('/v1/chat/completions', chatBody());
    expect(second.headers.get('x-cache')).toBe('hit');
    expect(await second.json()).toEqual(CHAT_REPLY);
    expect(upstream!.requests).toHaveLength(1);
    await until(() => svc!.events.length === 2);
    // The first request's event may come second: it waits for its after-response accounting.
    expect(svc!.events.filter((e) => e.cached)).toHaveLength(1);
    expect(svc!.events.find((e) => e.cached)).toMatchObject({
      mode: 'cached',
      cached: true,
      status: 200,
      upstreamStatus: undefined,
    });
  });

  it('a retrieval stage can add a tool to the spliced body and make a follow-up upstream call', async () => {
    const pipeline = await setup();
    pipeline.insert(
      {
        name: 'retrieval-tool',
        async run(ex, next) {
          const text = Buffer.isBuffer(ex.outBody) ? ex.outBody.toString() : '';
          const edits = new JsonEdits();
          edits.insert(['tools'], 1, { name: 'svc_retrieve', input_schema: { type: 'object' } });
          ex.outBody = Buffer.from(applyJsonEdits(text, edits));
          ex.outEncoding = undefined;
          await next();
        },
      },
      { after: 'splice' },
    );
    pipeline.insert(
      {
        name: 'retrieval-loop',
        async run(ex, next) {
          ex.upstream!.body.resume(); // discard the first answer
          ex.upstream = await ex.callUpstream(Buffer.from('{"follow":"up"}'));
          await next();
        },
      },
      { after: 'forward' },
    );
    const res = await post('/v1/messages', messagesBody());
    expect(await res.json()).toEqual(MESSAGES_REPLY);
    expect(upstream!.requests).toHaveLength(2);
    const first = JSON.parse(upstream!.requests[0]!.body.toString());
    expect(first.tools.map((t: { name: string }) => t.name)).toEqual(['bash', 'svc_retrieve']);
    expect(first.messages[2].content[0].content).toMatch(/^FAKE/);
    expect(upstream!.requests[1]!.body.toString()).toBe('{"follow":"up"}');
  });

  it('ProxyPipeline runs stages in order and stops where a stage does not call next', async () => {
    const seen: string[] = [];
    const stage = (name: string, goOn = true): ProxyStage => ({
      name,
      async run(_ex, next) {
        seen.push(name);
        if (goOn) await next();
      },
    });
    const p = new ProxyPipeline([stage('a'), stage('c', false), stage('d')]);
    p.insert(stage('b'), { after: 'a' });
    await p.run({} as ProxyExchange);
    expect(seen).toEqual(['a', 'b', 'c']);
  });
});
