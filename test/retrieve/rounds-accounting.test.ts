import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { filler } from '../context/helpers.js';
import {
  type MockUpstream,
  type RecordedRequest,
  replyJson,
  startMockUpstream,
  startSvc,
  type TestSvc,
  until,
} from '../server/helpers.js';
import { startSse, writeEvents } from '../server/sse-mocks.js';
import { wholeTokens } from '../stats/three-turn-session.js';

// Issue 18, item 4: a retrieval round svc answers inside the proxy is a request it
// sent: its usage and cost count in the request's totals, its tokens in what was
// sent and off what was saved, and the request log has one line per round.

let svc: TestSvc | undefined;
let mock: MockUpstream | undefined;
afterEach(async () => {
  await svc?.close();
  await mock?.close();
  svc = mock = undefined;
});

function sessionBody(stream: boolean): Record<string, unknown> {
  const messages: unknown[] = [{ role: 'user', content: 'Find the failing test.' }];
  for (let n = 0; n < 30; n += 1) {
    messages.push({
      role: 'assistant',
      content: [{ type: 'tool_use', id: `toolu_${n}`, name: 'Bash', input: { cmd: `cat f${n}.log` } }],
    });
    messages.push({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: `toolu_${n}`, content: `needle_${n} ${filler(n, 200)}` }],
    });
  }
  messages.push(
    { role: 'assistant', content: 'Read them all.' },
    { role: 'user', content: 'Which test fails?' },
  );
  return { model: 'claude-sonnet-4-5', max_tokens: 1000, stream, messages };
}

const hashIn = (req: RecordedRequest) => /svc_retrieve hash=([0-9a-f]{24})/.exec(req.body.toString())?.[1];
const ev = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

// The first answer calls svc_retrieve; the continuation answers. Usage of each, literally:
const FIRST = {
  input_tokens: 900,
  output_tokens: 20,
  cache_read_input_tokens: 3000,
  cache_creation_input_tokens: 100,
};
const SECOND = {
  input_tokens: 5000,
  output_tokens: 12,
  cache_read_input_tokens: 0,
  cache_creation_input_tokens: 0,
};
// claude-sonnet-4-5 (USD per million): input 3, output 15, cache read 0.30, 5-minute write 3.75.
const FIRST_COST = 900 * 3 + 20 * 15 + 3000 * 0.3 + 100 * 3.75; // 4275
const SECOND_COST = 5000 * 3 + 12 * 15; // 15180

async function upstream(stream: boolean): Promise<MockUpstream> {
  return startMockUpstream(async (req, res: ServerResponse) => {
    const body = JSON.parse(req.body.toString());
    const last = body.messages.at(-1);
    const answered = Array.isArray(last.content) && last.content[0]?.type === 'tool_result';
    const hash = hashIn(req)!;
    const content = answered
      ? [{ type: 'text', text: 'It is in billing.' }]
      : [{ type: 'tool_use', id: 'toolu_r1', name: 'svc_retrieve', input: { hash } }];
    const usage = answered ? SECOND : FIRST;
    if (!stream)
      return replyJson(res, 200, {
        id: answered ? 'msg_2' : 'msg_1',
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-5',
        content,
        stop_reason: answered ? 'end_turn' : 'tool_use',
        usage,
      });
    startSse(res);
    const { output_tokens, ...inputUsage } = usage;
    const events = [
      ev('message_start', {
        type: 'message_start',
        message: {
          id: answered ? 'msg_2' : 'msg_1',
          type: 'message',
          role: 'assistant',
          model: 'claude-sonnet-4-5',
          content: [],
          stop_reason: null,
          usage: { ...inputUsage, output_tokens: 1 },
        },
      }),
      answered
        ? ev('content_block_start', {
            type: 'content_block_start',
            index: 0,
            content_block: { type: 'text', text: '' },
          })
        : ev('content_block_start', {
            type: 'content_block_start',
            index: 0,
            content_block: { type: 'tool_use', id: 'toolu_r1', name: 'svc_retrieve', input: {} },
          }),
      answered
        ? ev('content_block_delta', {
            type: 'content_block_delta',
            index: 0,
            delta: { type: 'text_delta', text: 'It is in billing.' },
          })
        : ev('content_block_delta', {
            type: 'content_block_delta',
            index: 0,
            delta: { type: 'input_json_delta', partial_json: JSON.stringify({ hash }) },
          }),
      ev('content_block_stop', { type: 'content_block_stop', index: 0 }),
      ev('message_delta', {
        type: 'message_delta',
        delta: { stop_reason: answered ? 'end_turn' : 'tool_use', stop_sequence: null },
        usage: { output_tokens },
      }),
      ev('message_stop', { type: 'message_stop' }),
    ];
    return writeEvents(res, events);
  });
}

describe('a retrieval round is a request', () => {
  for (const stream of [false, true]) {
    it(`${stream ? 'streaming' : 'non-streaming'}: its usage, cost and tokens count in the request, its tokens come off the saving, one log line per round`, async () => {
      mock = await upstream(stream);
      const logDir = mkdtempSync(join(tmpdir(), 'svc-rounds-'));
      const logPath = join(logDir, 'requests.jsonl');
      svc = await startSvc({
        flags: {
          'messages-api-url': `${mock.url}/v1`,
          'context-limit': 6000,
          'compress-first': false,
          cache: false,
          'log-file': logPath,
        },
      });
      const res = await fetch(`${svc.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
        body: JSON.stringify(sessionBody(stream)),
      });
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('It is in billing.');
      await until(() => svc!.events.length === 1, 5000);
      expect(mock.requests).toHaveLength(2);
      const e = svc.events[0]!;
      const first = wholeTokens(mock.requests[0]!.body.toString());
      const continuation = wholeTokens(mock.requests[1]!.body.toString());

      // usage: both answers, every tier
      expect(e.usage).toEqual({ input: 5900, output: 32, cacheRead: 3000, cacheWrite: 100, cacheWrite1h: 0 });
      expect(e.costUsd).toBeCloseTo((FIRST_COST + SECOND_COST) / 1e6, 12);
      expect(e.retrievalRounds).toHaveLength(1);
      expect(e.retrievalRounds![0]).toMatchObject({ round: 1, tokens: continuation });
      expect(e.retrievalRounds![0]!.costUsd).toBeCloseTo(SECOND_COST / 1e6, 12);
      // tokens: the continuation is sent by svc, and comes off what compression saved
      expect(e.retrievalTokens).toBe(continuation);
      // The first body as svc counted it when it forwarded it (the engine's count; a re-parse of
      // the forwarded bytes differs by the few tokens of the context manager's drop note).
      const forwarded = e.tokensAfter - continuation;
      expect(Math.abs(forwarded - first)).toBeLessThanOrEqual(8);
      expect(e.tokensSaved).toBe(e.tokensBefore - e.tokensAfter + (e.tokensAdded ?? 0));
      const removed = e.tokensBefore - forwarded + (e.tokensAdded ?? 0);
      expect(removed).toBeGreaterThan(0);
      expect(e.tokensSaved).toBe(removed - continuation);

      // biome-ignore lint/suspicious/noExplicitAny: reads response JSON by path
      const stats = (await (await fetch(`${svc.url}/stats`)).json()) as Record<string, any>;
      expect(stats.requests.total).toBe(1);
      expect(stats.requests.retrieval_rounds).toBe(1);
      expect(stats.tokens.retrieval).toBe(continuation);
      expect(stats.tokens.sent).toBe(forwarded + continuation);
      expect(stats.tokens.saved).toBe(Math.max(0, removed - continuation));
      expect(stats.cost.total_cost_usd).toBeCloseTo((FIRST_COST + SECOND_COST) / 1e6, 12);
      // The cache-aware saving is the estimate without svc less both calls' cost.
      expect(e.cacheAwareSavingsUsd).toBeDefined();
      expect(stats.cost.cache_aware_savings_usd).toBeCloseTo(e.cacheAwareSavingsUsd!, 9);

      // the request log: the request (round 0) and its continuation (round 1), linked by request id
      await svc.close();
      const lines = readFileSync(logPath, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatchObject({
        request_id: e.requestId,
        round: 0,
        retrieval_rounds: 1,
        retrieval_tokens: continuation,
      });
      expect(lines[1]).toMatchObject({
        type: 'retrieval_round',
        request_id: e.requestId,
        round: 1,
        tokens_sent: continuation,
        usage: { input: 5000, output: 12, cacheRead: 0, cacheWrite: 0 },
      });
      expect(lines[1].cost_usd).toBeCloseTo(SECOND_COST / 1e6, 12);
      svc = undefined;
      rmSync(logDir, { recursive: true, force: true });
    });
  }
});
