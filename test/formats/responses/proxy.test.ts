import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { FORMATS } from '../../../src/formats/index.js';
import { retrievalTool } from '../../../src/server/retrieval/tool.js';
import { startGuardedSvc } from '../../guards/helpers.js';
import { createFakeCompress } from '../../server/fake-engine.js';
import {
  type MockUpstream,
  type RecordedRequest,
  replyJson,
  startMockUpstream,
  startSvc,
  type TestSvc,
  until,
  withoutRetrievalTool,
} from '../../server/helpers.js';
import { callItem, responseEvents, responseObject, responsesBody, sseOf, textItem } from './bodies.js';

let svc: TestSvc | undefined;
let upstream: MockUpstream | undefined;
afterEach(async () => {
  await svc?.close();
  await upstream?.close();
  svc = upstream = undefined;
});

type Json = Record<string, unknown>;
const bodyOf = (r: RecordedRequest): Json => JSON.parse(r.body.toString()) as Json;
const inputOf = (r: RecordedRequest) => bodyOf(r).input as Json[];

/** The answer the mock gives: a text and a call of the client's own tool. */
const OUTPUT = [
  textItem('Running it again.'),
  callItem('exec_command', '{"cmd":"npm test -- --run"}', 'call_7', 'fc_7'),
];
const USAGE = { input: 1000, cached: 600, output: 50 };

/**
 * A mock OpenAI upstream for `/v1/responses`: answers `reply(request)`'s items
 * as JSON or, for `stream: true`, as the API's SSE events.
 */
async function mock(reply: (body: Json, n: number) => Array<Record<string, unknown>> = () => OUTPUT) {
  let n = 0;
  upstream = await startMockUpstream(async (req, res) => {
    const body = JSON.parse(req.body.toString()) as Json;
    const output = reply(body, n++);
    if (body.stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(sseOf(responseEvents(output, USAGE, `resp_${n}`)));
    } else replyJson(res, 200, { ...responseObject(output, USAGE), id: `resp_${n}` });
  });
  return upstream;
}

const flags = () => ({ 'compat-api-url': `${upstream!.url}/v1`, 'messages-api-url': `${upstream!.url}/v1` });
const client = () => new OpenAI({ apiKey: 'sk-openai-test', baseURL: `${svc!.url}/v1`, maxRetries: 0 });
const request = (stream = false) =>
  responsesBody({ stream }) as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming;

describe('/v1/responses through the official openai SDK', () => {
  it('responses.create: tool outputs compressed, everything else byte-for-byte, the answer relayed unchanged, usage priced', async () => {
    await mock();
    svc = await startSvc({ compress: createFakeCompress(), flags: flags() });
    const response = await client().responses.create({ ...request(), model: 'gpt-5' });
    expect(response.output).toEqual(OUTPUT);
    expect(response.output_text).toBe('Running it again.');
    expect(response.usage?.input_tokens_details.cached_tokens).toBe(600);
    const got = upstream!.requests[0]!;
    expect(got.url).toBe('/v1/responses');
    expect(got.headers.authorization).toBe('Bearer sk-openai-test');
    const sent = bodyOf(got);
    const original = responsesBody() as Json & { input: Json[] };
    const input = sent.input as Json[];
    // function_call_output and custom_tool_call_output are compressed like tool outputs
    expect(input[4]!.output).toMatch(/^FAKEChunk ID: .*svc_retrieve hash=/s);
    expect(input[6]!.output).toMatch(/^FAKEpatch outp/);
    // reasoning (encrypted_content), calls, messages and every other field go as they came
    for (const i of [0, 1, 2, 3, 5, 7, 8]) expect(input[i]).toEqual(original.input[i]);
    for (const key of [
      'instructions',
      'store',
      'prompt_cache_key',
      'prompt_cache_retention',
      'context_management',
      'reasoning',
      'include',
      'max_output_tokens',
    ])
      expect(sent[key]).toEqual(original[key]);
    // the markers are retrievable: svc offers its tool after the client's
    expect((sent.tools as Json[]).map((t) => t.name)).toEqual([
      'exec_command',
      'apply_patch',
      'svc_retrieve',
    ]);
    await until(() => svc!.events.length === 1);
    const event = svc!.events[0]!;
    expect(event).toMatchObject({
      format: 'responses',
      model: 'gpt-5',
      usage: { input: 400, cacheRead: 600, output: 50, cacheWrite: 0 },
    });
    expect(event.tokensSaved).toBeGreaterThan(0);
    // gpt-5: $1.25 / M input, $0.125 / M cached input, $10 / M output
    expect(event.costUsd).toBeCloseTo((400 * 1.25 + 600 * 0.125 + 50 * 10) / 1e6, 12);
  });

  it('responses.create with stream: the events reach the SDK as sent, usage read from response.completed', async () => {
    await mock();
    svc = await startSvc({ compress: createFakeCompress(), flags: flags() });
    const stream = await client().responses.create({ ...request(true), model: 'gpt-5', stream: true });
    const types: string[] = [];
    let text = '';
    let final: OpenAI.Responses.Response | undefined;
    for await (const ev of stream) {
      types.push(ev.type);
      if (ev.type === 'response.output_text.delta') text += ev.delta;
      if (ev.type === 'response.completed') final = ev.response;
    }
    const expected = responseEvents(OUTPUT, USAGE, 'resp_1');
    expect(types).toEqual(expected.map(([t]) => t));
    expect(text).toBe('Running it again.');
    expect(final?.output).toEqual(OUTPUT);
    expect(inputOf(upstream!.requests[0]!)[4]!.output).toMatch(/^FAKEChunk ID/);
    await until(() => svc!.events.length === 1);
    expect(svc!.events[0]).toMatchObject({
      format: 'responses',
      stream: true,
      usage: { input: 400, cacheRead: 600, output: 50 },
    });
  });

  it('relays the upstream bytes unchanged (no retrieval round)', async () => {
    await mock();
    svc = await startSvc({ compress: createFakeCompress(), flags: flags() });
    const body = { ...responsesBody({ stream: true }), input: [{ role: 'user', content: 'hi' }] };
    const res = await fetch(`${svc.url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-1' },
      body: JSON.stringify(body),
    });
    expect(await res.text()).toBe(sseOf(responseEvents(OUTPUT, USAGE, 'resp_1')));
    // nothing compressed: the original bytes go, with only the retrieval tool added to the client's
    // tools (present from a conversation's first request, so `tools` never changes mid-conversation)
    const sent = upstream!.requests[0]!.body.toString();
    expect(sent).toContain(JSON.stringify(retrievalTool(FORMATS.responses)));
    expect(withoutRetrievalTool(sent)).toBe(JSON.stringify(body));
  });

  it('a request continuing server-side state: only its new items are compressed, previous_response_id passes', async () => {
    await mock();
    svc = await startSvc({ compress: createFakeCompress(), flags: flags() });
    const original = responsesBody() as Json & { input: Json[] };
    const body = { ...original, store: true, previous_response_id: 'resp_0', input: original.input.slice(4) };
    await client().responses.create(body as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming);
    const sent = bodyOf(upstream!.requests[0]!);
    expect(sent.previous_response_id).toBe('resp_0');
    expect(sent.store).toBe(true);
    const input = sent.input as Json[];
    expect(input).toHaveLength(5);
    expect(input[0]!.output).toMatch(/^FAKEChunk ID/);
    expect(input.slice(3)).toEqual(body.input.slice(3));
  });

  it('never changes a compaction item, and compresses nothing before the latest one', async () => {
    await mock();
    svc = await startSvc({ compress: createFakeCompress(), flags: flags() });
    const body = responsesBody({ compaction: true }) as Json & { input: Json[] };
    await client().responses.create(body as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming);
    const input = inputOf(upstream!.requests[0]!);
    expect(input[0]).toEqual(body.input[0]); // a long user text before the compaction: untouched
    expect(input[1]).toEqual({ type: 'compaction', id: 'cmp_1', encrypted_content: 'gAAAAB-compacted==' });
    expect(input[6]!.output).toMatch(/^FAKEChunk ID/); // after it: compressed
  });
});

describe('/v1/responses/input_tokens', () => {
  it('is compressed as /v1/responses would be: the forwarded bodies are equal, the count relayed', async () => {
    upstream = await startMockUpstream(async (req, res) => {
      if (req.url.startsWith('/v1/responses/input_tokens'))
        replyJson(res, 200, { object: 'response.input_tokens', input_tokens: 2345 });
      else replyJson(res, 200, responseObject(OUTPUT, USAGE));
    });
    svc = await startSvc({ compress: createFakeCompress(), flags: flags() });
    const body = responsesBody();
    await client().responses.create(body as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming);
    const count = await client().responses.inputTokens.count(
      body as unknown as OpenAI.Responses.InputTokenCountParams,
    );
    expect(count.input_tokens).toBe(2345);
    const [asked, counted] = upstream.requests;
    expect(counted!.url).toBe('/v1/responses/input_tokens');
    expect(counted!.body.toString()).toBe(asked!.body.toString());
    expect(inputOf(counted!)[4]!.output).toMatch(/^FAKEChunk ID/);
  });
});

describe('/v1/responses: guards and retrieval as for the other formats', () => {
  it('budget exceeded: 402 in the OpenAI shape, nothing forwarded', async () => {
    await mock();
    svc = await startGuardedSvc({ flags: { ...flags(), budget: 0.0001 } });
    await client().responses.create({ ...request(), model: 'gpt-5' }); // $0.001075: over the limit
    await until(() => svc!.events.length === 1);
    await new Promise((r) => setTimeout(r, 20));
    const err = await client()
      .responses.create({ ...request(), model: 'gpt-5', prompt_cache_key: 'another' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
    expect((err as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({
      type: 'budget_exceeded',
      period: 'daily',
    });
    expect(upstream!.requests).toHaveLength(1);
    await until(() => svc!.events.length === 2);
    expect(svc!.events[1]).toMatchObject({
      format: 'responses',
      status: 402,
      errorCode: 'SVC_BUDGET_EXCEEDED',
    });
  });

  it('the response cache answers a repeated request', async () => {
    await mock();
    svc = await startGuardedSvc({ flags: flags() });
    const a = await client().responses.create({ ...request(), model: 'gpt-5' });
    const b = await client().responses.create({ ...request(), model: 'gpt-5' });
    expect(b).toEqual(a);
    expect(upstream!.requests).toHaveLength(1);
    await until(() => svc!.events.length === 2);
    expect(svc!.events[1]).toMatchObject({ format: 'responses', cached: true });
  });

  it('rate limit: 429 with the limit headers', async () => {
    await mock();
    svc = await startGuardedSvc({ flags: { ...flags(), 'rate-limit-rpm': 1 } });
    await client().responses.create(request());
    const err = await client()
      .responses.create(request())
      .catch((e: unknown) => e);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(429);
    expect((err as InstanceType<typeof OpenAI.APIError>).headers?.get('x-ratelimit-limit-requests')).toBe(
      '1',
    );
    expect(upstream!.requests).toHaveLength(1);
  });

  it.each([false, true])(
    'retrieval round (stream: %s): svc answers svc_retrieve, the client sees one answer',
    async (stream) => {
      await mock((body, n) => {
        if (n > 0) return [textItem('The log says: test output line 3.', 'msg_2')];
        const input = body.input as Json[];
        const hash = /hash=([0-9a-f]{24})/.exec(String(input[4]!.output))![1]!;
        return [
          textItem('Let me look.'),
          callItem('svc_retrieve', JSON.stringify({ hash, query: 'line 3' })),
        ];
      });
      svc = await startSvc({ compress: createFakeCompress(), flags: flags() });
      let text = '';
      let final: OpenAI.Responses.Response;
      if (stream) {
        const s = client().responses.stream({
          ...(responsesBody({ stream: true }) as unknown as OpenAI.Responses.ResponseCreateParamsStreaming),
          model: 'gpt-5',
        });
        s.on('response.output_text.delta', (e) => {
          text += e.delta;
        });
        final = await s.finalResponse();
      } else {
        final = await client().responses.create({ ...request(), model: 'gpt-5' });
        text = final.output_text;
      }
      expect(upstream!.requests).toHaveLength(2);
      const second = inputOf(upstream!.requests[1]!);
      const first = inputOf(upstream!.requests[0]!);
      // the continuation repeats the first request's items, then the model's turn and svc's answer
      expect(second.slice(0, first.length)).toEqual(first);
      const turn = second.slice(first.length);
      expect(turn.map((i) => i.type)).toEqual(['message', 'function_call', 'function_call_output']);
      expect(turn[2]).toMatchObject({
        call_id: 'call_9',
        output: expect.stringContaining('test output line 3'),
      });
      expect(JSON.stringify(final.output)).not.toContain('svc_retrieve');
      if (stream) {
        // one response: the first round's text streamed, the call hidden, the last round after it
        expect(final.output.map((o) => o.type)).toEqual(['message', 'message']);
        expect(text).toBe('Let me look.The log says: test output line 3.');
        expect(final.id).toBe('resp_1');
      } else {
        // as in the other formats, a JSON answer is the last round's
        expect(final.output.map((o) => o.type)).toEqual(['message']);
        expect(text).toBe('The log says: test output line 3.');
      }
    },
  );
});
