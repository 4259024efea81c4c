import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { tokenizerFor } from '../../src/engine/tokens.js';
import { FORMATS, parseRequest } from '../../src/formats/index.js';
import { credentialOf } from '../../src/guards/credentials.js';
import { keyHash } from '../../src/server/auth.js';
import type { ProxyStage } from '../../src/server/context.js';
import { type MockUpstream, replyJson, startMockUpstream, until } from '../server/helpers.js';
import { MESSAGES_REPLY } from '../server/sse-mocks.js';
import { type GuardedSvc, startGuardedSvc, testClock } from './helpers.js';

let svc: GuardedSvc | undefined;
let upstream: MockUpstream | undefined;
afterEach(async () => {
  await svc?.close();
  await upstream?.close();
  svc = upstream = undefined;
});

const TPM = 1_000_000;
const KEY = 'sk-ant-bound';

/** A new conversation each call: a tool output of distinct lines, as an agent sends it. */
let n = 0;
function conversation(lines: number) {
  n += 1;
  const output = Array.from(
    { length: lines },
    (_, i) => `run ${n} step ${i}: checked module_${i * 7} in ${i % 90} ms`,
  );
  return {
    model: 'claude-sonnet-4-5',
    max_tokens: 64,
    messages: [
      { role: 'user', content: `Check the modules (${n}).` },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'check' } }],
      },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: output.join('\n') }],
      },
    ],
  };
}

/** Resolves once the limiter holds `tokens` for the test key (fails after 2 s). */
async function untilHeld(tokens: number): Promise<void> {
  const end = Date.now() + 2000;
  let now = await held();
  while (now !== tokens) {
    if (Date.now() > end) throw new Error(`the limiter holds ${now}, not ${tokens}`);
    await new Promise((r) => setTimeout(r, 5));
    now = await held();
  }
}

/** Tokens the limiter holds for the test key now. */
async function held(): Promise<number> {
  const limiter = svc!.server.ctx.guards!.rateLimiter!;
  const snapshot = await limiter.peek(keyHash(credentialOf({ 'x-api-key': KEY }))!);
  return TPM - snapshot.remainingTokens;
}

function post(body: object): Promise<Response> {
  return fetch(`${svc!.url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': KEY, 'anthropic-version': '2023-06-01' },
    body: JSON.stringify(body),
  });
}

/** The exact count the limiter reserves for a body (the messages before compression). */
function counted(body: object): number {
  const parsed = parseRequest(FORMATS.messages, body as Record<string, unknown>);
  return tokenizerFor(parsed.model ?? 'unknown').countMessages(parsed.messages);
}

describe('the rate limiter does not count a new conversation before forwarding it (issue 19)', () => {
  it('holds an upper bound of its tokens until it is forwarded, then its count, then the reported usage', async () => {
    const waiting: ServerResponse[] = [];
    upstream = await startMockUpstream((_r, res) => {
      waiting.push(res);
    });
    svc = await startGuardedSvc({
      flags: { 'messages-api-url': `${upstream.url}/v1`, 'rate-limit-tpm': TPM, 'rate-limit-rpm': 1000 },
      now: testClock(Date.parse('2026-11-27T12:00:00Z')).now,
    });
    // what the limiter holds as the request goes upstream
    const heldWhenForwarded: number[] = [];
    const seam: ProxyStage = {
      name: 'observe-hold',
      async run(_ex, next) {
        heldWhenForwarded.push(await held());
        return next();
      },
    };
    svc.server.ctx.pipeline.insert(seam, { before: 'forward' });
    const body = conversation(400);
    const answer = post(body);
    await until(() => waiting.length === 1);
    const count = counted(body);
    // it went upstream while the limiter held more than its count: the count was not made first
    expect(heldWhenForwarded[0]).toBeGreaterThan(2 * count);
    // brought down to the count while the answer is awaited
    await untilHeld(count);
    replyJson(waiting[0]!, 200, MESSAGES_REPLY);
    expect((await answer).status).toBe(200);
    const usage = MESSAGES_REPLY.usage;
    const reported =
      usage.input_tokens +
      usage.output_tokens +
      usage.cache_read_input_tokens +
      usage.cache_creation_input_tokens;
    await untilHeld(reported);
  });

  it('settles an answer without usage at the count, not at the bound', async () => {
    const { usage: _usage, ...noUsage } = MESSAGES_REPLY;
    upstream = await startMockUpstream((_r, res) => replyJson(res, 200, noUsage));
    svc = await startGuardedSvc({
      flags: { 'messages-api-url': `${upstream.url}/v1`, 'rate-limit-tpm': TPM, 'rate-limit-rpm': 1000 },
      now: testClock(Date.parse('2026-11-27T12:00:00Z')).now,
    });
    const body = conversation(400);
    const res = await post(body);
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    await until(() => svc!.events.length === 1);
    expect(await held()).toBe(counted(body));
  });

  it('refuses a request only when its count does not fit, with the headers of its count', async () => {
    upstream = await startMockUpstream((_r, res) => replyJson(res, 200, MESSAGES_REPLY));
    const tpm = 3000;
    svc = await startGuardedSvc({
      flags: { 'messages-api-url': `${upstream.url}/v1`, 'rate-limit-tpm': tpm, 'rate-limit-rpm': 1000 },
      now: testClock(Date.parse('2026-11-27T12:00:00Z')).now,
    });
    // its bound (bytes) is over the whole minute's allowance, its count well under what is left
    const fits = conversation(70);
    expect(Buffer.byteLength(JSON.stringify(fits))).toBeGreaterThan(tpm);
    expect(counted(fits)).toBeLessThan(tpm - 1200);
    const first = await post(fits);
    expect(first.status).toBe(200);
    await first.arrayBuffer();
    await until(() => svc!.events.length === 1);
    // 1179 tokens reported: 1821 left; a second request of the same size still fits
    expect((await post(conversation(70))).status).toBe(200);
    await until(() => svc!.events.length === 2);
    // 3000 - 2 x 1179 = 642 left: one whose count is over that is refused, its count named
    const big = conversation(70);
    const refused = await post(big);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('x-ratelimit-remaining-tokens'))).toBe(tpm - 2 * 1179);
    expect(counted(big)).toBeGreaterThan(tpm - 2 * 1179);
  });
});
