import { afterEach, describe, expect, it } from 'vitest';
import { objectMemberSpans } from '../../src/json/spans.js';
import { toolsSpanAfterSplice } from '../../src/server/retrieval/tool.js';
import { createFakeCompress } from './fake-engine.js';
import { type MockUpstream, replyJson, startMockUpstream, startSvc, type TestSvc } from './helpers.js';
import { MESSAGES_REPLY } from './sse-mocks.js';

/**
 * The proxy reuses the parse (and every per-message result) of a
 * conversation's earlier turn. That must never change what it forwards:
 * each turn sent to a server that saw the earlier turns must go upstream
 * byte for byte as it does from a server that sees it first.
 */

const started: Array<TestSvc | MockUpstream> = [];
afterEach(async () => {
  for (const s of started.splice(0)) await s.close();
});

/** A coding-agent turn: a tool call and its large output (JSON, log or listing; every 6th repeats). */
function round(n: number): unknown[] {
  const id = `toolu_${n}`;
  const k = n % 6;
  const output =
    n % 3 === 0
      ? JSON.stringify(
          Array.from({ length: 60 }, (_, i) => ({
            id: k * 100 + i,
            status: i % 17 ? 'ok' : 'failed',
            ms: i * 7,
          })),
        )
      : n % 3 === 1
        ? Array.from({ length: 80 }, (_, i) => `[${i}] INFO worker ${k} step ${i % 9} done in ${i}ms ✓`).join(
            '\n',
          )
        : Array.from(
            { length: 70 },
            (_, i) => `src/mod${k}/file${i}.ts:${i + 1}: export const v${i} = ${i}; // → 日本`,
          ).join('\n');
  return [
    { role: 'assistant', content: [{ type: 'tool_use', id, name: 'run', input: { n } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: output }] },
  ];
}

/** Turn t's body as an agent sends it: cache_control on the newest block only, tools after the messages. */
function turnBody(t: number): string {
  const messages: Array<Record<string, unknown>> = [{ role: 'user', content: 'Fix the failing build.' }];
  for (let n = 0; n < t; n++) messages.push(...(round(n) as Array<Record<string, unknown>>));
  const last = messages.at(-1) as { content: Array<Record<string, unknown>> };
  messages[messages.length - 1] = {
    ...last,
    content: [{ ...last.content[0], cache_control: { type: 'ephemeral' } }],
  };
  return JSON.stringify({
    model: 'claude-sonnet-4-5',
    max_tokens: 1024,
    system: 'You are a coding agent.',
    messages,
    tools: [{ name: 'run', description: 'runs a step', input_schema: { type: 'object' } }],
  });
}

async function forward(svc: TestSvc, upstream: MockUpstream, body: string): Promise<string> {
  const res = await fetch(`${svc.url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-test' },
    body,
  });
  expect(res.status).toBe(200);
  await res.arrayBuffer();
  return upstream.requests.at(-1)!.body.toString('utf8');
}

describe('reusing the earlier turn', () => {
  it('forwards every turn exactly as a server seeing it first would, below and above the context limit', async () => {
    const upstream = await startMockUpstream((_req, res) => replyJson(res, 200, MESSAGES_REPLY));
    started.push(upstream);
    const flags = { 'messages-api-url': `${upstream.url}/v1`, 'context-limit': 9000 };
    const steady = await startSvc({ flags });
    started.push(steady);
    let cut = false;
    for (let t = 1; t <= 22; t += 3) {
      const body = turnBody(t);
      const viaSteady = await forward(steady, upstream, body);
      const fresh = await startSvc({ flags });
      const viaFresh = await forward(fresh, upstream, body);
      await fresh.close();
      expect(viaSteady).toBe(viaFresh);
      cut ||= viaSteady.includes('messages omitted');
    }
    // the session went over the limit, so the cut path was compared too, and repeats were deduplicated
    expect(cut).toBe(true);
    expect(steady.events.some((e) => e.transforms.some((x) => x.startsWith('dedupe:')))).toBe(true);
    expect(steady.events.every((e) => !e.compressionFailed)).toBe(true);
  });
});

describe('the same body again (a memoized turn)', () => {
  it('forwards the same bytes each time, and a body that differs only after the messages as a fresh server would', async () => {
    const upstream = await startMockUpstream((_req, res) => replyJson(res, 200, MESSAGES_REPLY));
    started.push(upstream);
    // no response cache: every request goes upstream (`stream: false` and no `stream` are one cache key)
    const flags = { 'messages-api-url': `${upstream.url}/v1`, cache: false };
    const svc = await startSvc({ flags });
    started.push(svc);
    const body = turnBody(10);
    const first = await forward(svc, upstream, body);
    expect(first).toContain('svc_retrieve hash=');
    for (let i = 0; i < 3; i++) expect(await forward(svc, upstream, body)).toBe(first);
    // counted the same way each time, the inserted svc_retrieve definition included
    const counts = svc.events.map((e) => [e.tokensBefore, e.tokensAfter, e.tokensSaved, e.tokensAdded]);
    expect(counts[0]![3]).toBeGreaterThan(0);
    for (const c of counts) expect(c).toEqual(counts[0]);
    // the same messages (the parser hands on the same array) with other members after them:
    // what was written for the first text must not be given for this one
    const json = JSON.parse(body) as Record<string, unknown>;
    const { tools, ...rest } = json;
    const variants = [
      JSON.stringify({ ...rest, tools, metadata: { user_id: 'u-1' } }),
      body.replace('"description":"runs a step"', '"description":"runs one step"'),
      JSON.stringify({ ...rest, tools, stream: false }),
    ];
    for (const variant of variants) {
      const viaSteady = await forward(svc, upstream, variant);
      const fresh = await startSvc({ flags });
      const viaFresh = await forward(fresh, upstream, variant);
      await fresh.close();
      expect(viaSteady).toBe(viaFresh);
      expect(viaSteady).not.toBe(first);
    }
    expect(svc.events.every((e) => !e.compressionFailed && e.tokensSaved > 0)).toBe(true);
  });
});

describe('a large body sent again (read in many pieces, held as the bytes kept from before)', () => {
  it('goes upstream byte for byte as sent (--no-optimize) and as a fresh server forwards it', async () => {
    const upstream = await startMockUpstream((_req, res) => replyJson(res, 200, MESSAGES_REPLY));
    started.push(upstream);
    const body = turnBody(70);
    expect(body.length).toBeGreaterThan(200_000);
    const plain = await startSvc({ flags: { 'messages-api-url': `${upstream.url}/v1`, optimize: false } });
    started.push(plain);
    for (let i = 0; i < 3; i++) expect(await forward(plain, upstream, body)).toBe(body);
    // one character changed near the end: not the kept body
    const edited = body.replace('"description":"runs a step"', '"description":"runs a stop"');
    expect(await forward(plain, upstream, edited)).toBe(edited);
    const flags = { 'messages-api-url': `${upstream.url}/v1`, cache: false };
    const svc = await startSvc({ flags });
    started.push(svc);
    const first = await forward(svc, upstream, body);
    const fresh = await startSvc({ flags });
    const viaFresh = await forward(fresh, upstream, body);
    await fresh.close();
    expect(first).toBe(viaFresh);
    for (let i = 0; i < 3; i++) expect(await forward(svc, upstream, body)).toBe(first);
    expect(await forward(svc, upstream, edited)).not.toBe(first);
  });
});

describe('conversations that start alike and end with the same tool list', () => {
  it('forwards each as a fresh server would (the tool list is not taken from another body)', async () => {
    // (the spans of a tool list reused at another place: test/json/prefix-parse.test.ts)
    const upstream = await startMockUpstream((_req, res) => replyJson(res, 200, MESSAGES_REPLY));
    started.push(upstream);
    // a deterministic engine: what the engine learns across conversations (TOIN) is not what is compared here
    const flags = { 'messages-api-url': `${upstream.url}/v1`, cache: false };
    const steady = await startSvc({ flags, compress: createFakeCompress() });
    started.push(steady);
    // shaped like a coding agent's body: the messages first, then the system prompt and the tools
    const variant = (t: number, shift: number) => {
      const json = JSON.parse(turnBody(t)) as Record<string, unknown> & { messages: unknown[] };
      const [first, ...rest] = json.messages;
      const rounds = rest.map((m) => JSON.parse(JSON.stringify(m).replaceAll('toolu_', `toolu_${shift}_`)));
      return JSON.stringify({
        model: json.model,
        messages: [first, ...rounds],
        system: json.system,
        tools: json.tools,
        max_tokens: json.max_tokens,
      });
    };
    for (const [t, shift] of [
      [6, 1],
      [9, 2],
      [7, 3],
    ] as const) {
      const body = variant(t, shift);
      const viaSteady = await forward(steady, upstream, body);
      const fresh = await startSvc({ flags, compress: createFakeCompress() });
      const viaFresh = await forward(fresh, upstream, body);
      await fresh.close();
      expect(viaSteady).toBe(viaFresh);
      expect(viaSteady).toContain('"name":"svc_retrieve"');
    }
    expect(steady.events.every((e) => !e.compressionFailed && e.status === 200)).toBe(true);
  });
});

describe('a retrieval round on a memoized turn', () => {
  it('continues from the same forwarded body, with the exact original, each time', async () => {
    // the model calls svc_retrieve on the first call of each request, then answers
    const upstream = await startMockUpstream((rec, res) => {
      const sent = JSON.parse(rec.body.toString('utf8')) as { messages: Array<{ content: unknown }> };
      const last = JSON.stringify(sent.messages.at(-1)?.content ?? '');
      if (last.includes('svc_retrieve') || last.includes('"tool_result"') === false) {
        const hash = /svc_retrieve hash=([0-9a-f]{24})/.exec(rec.body.toString('utf8'))?.[1];
        if (hash && !rec.body.toString('utf8').includes('"id":"toolu_r1"'))
          return replyJson(res, 200, {
            ...MESSAGES_REPLY,
            content: [{ type: 'tool_use', id: 'toolu_r1', name: 'svc_retrieve', input: { hash } }],
            stop_reason: 'tool_use',
          });
      }
      return replyJson(res, 200, MESSAGES_REPLY);
    });
    started.push(upstream);
    const svc = await startSvc({ flags: { 'messages-api-url': `${upstream.url}/v1`, cache: false } });
    started.push(svc);
    // the last message a user text, so the first call of each request gets the tool call
    const body = JSON.stringify({
      ...(JSON.parse(turnBody(10)) as Record<string, unknown>),
      messages: [
        ...(JSON.parse(turnBody(10)) as { messages: unknown[] }).messages,
        { role: 'assistant', content: 'Looked.' },
        { role: 'user', content: 'And?' },
      ],
    });
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${svc.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-test' },
        body,
      });
      expect(res.status).toBe(200);
      expect(await res.text()).not.toContain('svc_retrieve');
    }
    const bodies = upstream.requests.map((r) => r.body.toString('utf8'));
    expect(bodies).toHaveLength(6);
    // each request: the first call, then the continuation holding the original
    expect(bodies[1]).toContain('"id":"toolu_r1"');
    expect(bodies[1]!.length).toBeGreaterThan(bodies[0]!.length);
    for (const i of [2, 4]) {
      expect(bodies[i]).toBe(bodies[0]);
      expect(bodies[i + 1]).toBe(bodies[1]);
    }
  });
});

describe('the retrieval tool joins the client tools', () => {
  const TOOLS = [
    { name: 'run', description: 'runs a step', input_schema: { type: 'object' } },
    { name: 'read', description: 'reads a file', input_schema: { type: 'object' } },
  ];
  const cases: Array<[string, (messages: unknown[]) => Record<string, unknown>, unknown[]]> = [
    [
      'after the messages',
      (messages) => ({ model: 'claude-sonnet-4-5', max_tokens: 9, messages, tools: TOOLS }),
      TOOLS,
    ],
    [
      'before the messages',
      (messages) => ({ model: 'claude-sonnet-4-5', tools: TOOLS, messages, max_tokens: 9 }),
      TOOLS,
    ],
    [
      'in an empty list',
      (messages) => ({ model: 'claude-sonnet-4-5', max_tokens: 9, messages, tools: [] }),
      [],
    ],
  ];
  for (const [where, make, tools] of cases) {
    it(`appends svc_retrieve to a tools array ${where}, every other byte outside the messages kept`, async () => {
      const upstream = await startMockUpstream((_req, res) => replyJson(res, 200, MESSAGES_REPLY));
      started.push(upstream);
      const svc = await startSvc({ flags: { 'messages-api-url': `${upstream.url}/v1` } });
      started.push(svc);
      const messages: unknown[] = [{ role: 'user', content: 'Fix the failing build.' }];
      for (let n = 0; n < 6; n++) messages.push(...round(n));
      messages.push({ role: 'assistant', content: 'Looked.' }, { role: 'user', content: 'And?' });
      // pretty-printed: whitespace inside the tools array must survive
      const body = JSON.stringify(make(messages), null, 2);
      const sent = await forward(svc, upstream, body);
      expect(sent).toContain('svc_retrieve hash=');
      const json = JSON.parse(sent);
      expect(json.tools.map((t: { name: string }) => t.name)).toEqual([
        ...tools.map((t) => (t as { name: string }).name),
        'svc_retrieve',
      ]);
      // outside the messages member, the forwarded text is the client's plus the one tool
      const outside = (text: string) => {
        const member = objectMemberSpans(text, text.indexOf('{')).find((m) => m.key === 'messages')!;
        return text.slice(0, member.value.start) + text.slice(member.value.end);
      };
      const toolText = JSON.stringify(json.tools.at(-1));
      expect(outside(sent).replace(`,${toolText}`, '').replace(toolText, '')).toBe(outside(body));
    });
  }
});

describe('toolsSpanAfterSplice', () => {
  const original = JSON.stringify(
    { model: 'm', messages: [{ role: 'user', content: 'a long text here' }], tools: [{ name: 'x' }] },
    null,
    1,
  );
  const body = JSON.parse(original);
  it('finds the tools array of a spliced body without scanning it (the messages member changed length)', () => {
    const spliced = original.replace('a long text here', 'short');
    const span = toolsSpanAfterSplice(original, body, undefined, spliced)!;
    expect(JSON.parse(spliced.slice(span.start, span.end))).toEqual([{ name: 'x' }]);
    const before = JSON.stringify({ tools: [{ name: 'x' }], messages: [{ role: 'user', content: 'abc' }] });
    const at = toolsSpanAfterSplice(before, JSON.parse(before), undefined, before.replace('abc', 'a'))!;
    expect(before.slice(at.start, at.end)).toBe('[{"name":"x"}]');
  });
  it('gives up when text outside the messages member changed, or there is no tools member', () => {
    expect(toolsSpanAfterSplice(original, body, undefined, original.replace('"m"', '"mm"'))).toBeUndefined();
    const { tools: _, ...without } = body;
    expect(toolsSpanAfterSplice(original, without, undefined, original)).toBeUndefined();
  });
});
