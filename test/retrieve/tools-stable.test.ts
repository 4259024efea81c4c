import { afterEach, describe, expect, it } from 'vitest';
import { FORMATS } from '../../src/formats/index.js';
import { retrievalTool } from '../../src/server/retrieval/tool.js';
import {
  type MockUpstream,
  replyJson,
  startMockUpstream,
  startSvc,
  type TestSvc,
} from '../server/helpers.js';

let svc: TestSvc | undefined;
let mock: MockUpstream | undefined;
afterEach(async () => {
  await svc?.close();
  await mock?.close();
  svc = mock = undefined;
});

const MARKER = /\[svc: [^\]]*retrieve with svc_retrieve hash=[0-9a-f]{24}\]/;

/** A tool output the engine compresses (and, sent twice, replaces by a reference to the first). */
function bigLog(tag: string): string {
  const lines: string[] = [];
  for (let i = 0; i < 240; i++)
    lines.push(
      `2025-03-01T08:${String(Math.floor(i / 60)).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}Z INFO ${tag} handled request ${i} in ${i % 9}ms`,
    );
  lines.splice(150, 0, `2025-03-01T08:02:30Z ERROR ${tag} connection reset by peer`);
  return lines.join('\n');
}

const TOOLS = [
  {
    name: 'Bash',
    description: 'Runs a shell command.',
    input_schema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
  },
];

/**
 * A Claude Code-like session, one messages-format body per turn: a long
 * pasted user message first, small tool results, then a big log (the first
 * marker), the same log again (a dedupe marker) and a new user message.
 */
function turns(): Array<Record<string, unknown>> {
  const messages: Array<Record<string, unknown>> = [
    {
      role: 'user',
      content: [{ type: 'text', text: `Why does the api fail? Here is what I see:\n${bigLog('pasted')}` }],
    },
  ];
  const bodies: Array<Record<string, unknown>> = [];
  const snapshot = () =>
    bodies.push({
      model: 'claude-sonnet-4-5',
      max_tokens: 1000,
      tools: TOOLS,
      messages: structuredClone(messages),
    });
  snapshot();
  const outputs = ['ok', 'api is running', bigLog('api'), bigLog('api'), 'done'];
  outputs.forEach((output, n) => {
    messages.push({
      role: 'assistant',
      content: [{ type: 'tool_use', id: `toolu_${n}`, name: 'Bash', input: { command: `step ${n}` } }],
    });
    messages.push({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: `toolu_${n}`, content: output }],
    });
    snapshot();
  });
  messages.push({ role: 'assistant', content: [{ type: 'text', text: 'The api resets connections.' }] });
  messages.push({ role: 'user', content: [{ type: 'text', text: 'Fix it.' }] });
  snapshot();
  return bodies;
}

/** The raw `tools` member of a forwarded body (its bytes, as sent). */
function toolsMember(text: string): string {
  const start = text.indexOf('"tools":');
  const end = text.indexOf(',"messages":');
  expect(start, 'the forwarded body has a tools member before its messages').toBeGreaterThan(0);
  return text.slice(start, end);
}

describe('the retrieval tool never changes a conversation’s tools (principle 2)', () => {
  it('forwards byte-identical tools, with svc_retrieve, from the first request to the last, and a stable message prefix', async () => {
    mock = await startMockUpstream((_req, res) =>
      replyJson(res, 200, {
        id: 'm',
        type: 'message',
        role: 'assistant',
        content: [{ type: 'text', text: 'ok' }],
        stop_reason: 'end_turn',
        usage: { input_tokens: 1, output_tokens: 1 },
      }),
    );
    svc = await startSvc({ flags: { 'messages-api-url': `${mock.url}/v1`, cache: false } });
    const bodies = turns();
    for (const body of bodies) {
      const res = await fetch(`${svc.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    const sent = mock.requests.map((r) => r.body.toString('utf8'));
    expect(sent).toHaveLength(bodies.length);
    // the first request has no marker, a later one has: the turn where the first marker appears is covered
    const firstMarked = sent.findIndex((t) => MARKER.test(t));
    expect(firstMarked).toBeGreaterThan(0);
    const tools = sent.map(toolsMember);
    expect(tools[0]).toBe(`"tools":${JSON.stringify([...TOOLS, retrievalTool(FORMATS.messages)])}`);
    for (const t of tools) expect(t).toBe(tools[0]);
    // every forwarded request's messages are an exact prefix of the next one's (no cache bust)
    const forwarded = sent.map((t) =>
      (JSON.parse(t) as { messages: unknown[] }).messages.map((m) => JSON.stringify(m)),
    );
    for (let k = 1; k < forwarded.length; k++) {
      const prev = forwarded[k - 1]!;
      expect(forwarded[k]!.slice(0, prev.length), `request ${k} re-sends request ${k - 1} unchanged`).toEqual(
        prev,
      );
    }
    // the long pasted user message is forwarded as the client sent it, on every turn
    for (const t of sent) expect(t).toContain(JSON.stringify(bodies[0]!.messages as unknown[]).slice(1, 200));
  });

  it('adds no tools member to a conversation without tools whose request was not cut', async () => {
    mock = await startMockUpstream((_req, res) => replyJson(res, 200, { ok: true }));
    svc = await startSvc({ flags: { 'messages-api-url': `${mock.url}/v1`, cache: false } });
    const bodies = turns().map(({ tools: _t, ...rest }) => rest);
    for (const body of bodies) {
      await (
        await fetch(`${svc.url}/v1/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        })
      ).arrayBuffer();
    }
    const sent = mock.requests.map((r) => r.body.toString('utf8'));
    expect(sent.some((t) => MARKER.test(t))).toBe(true);
    for (const t of sent) expect(t).not.toContain('"tools"');
  });
});
