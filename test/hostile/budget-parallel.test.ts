import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { periodStart } from '../../src/guards/budget-periods.js';
import { startGuardedSvc, testClock } from '../guards/helpers.js';
import { type MockUpstream, replyJson, startMockUpstream, type TestSvc, until } from '../server/helpers.js';
import { startSse } from '../server/sse-mocks.js';

let svc: TestSvc | undefined;
let upstream: MockUpstream | undefined;
let home: string | undefined;
afterEach(async () => {
  await svc?.close();
  await upstream?.close();
  if (home) rmSync(home, { recursive: true, force: true });
  svc = upstream = home = undefined;
});

const T = Date.parse('2025-06-15T10:20:00Z');
const LIMIT = 1;
const MAX_TOKENS = 1000;
/** The most one request costs: gpt-4o, a short prompt, at most MAX_TOKENS of output ($2.50 / $10 per million). */
const MAX_COST = (50 * 2.5 + MAX_TOKENS * 10) / 1e6;
const ANSWER = 'The build fails because the config file is missing a comma. '.repeat(30);
const chunk = (delta: Record<string, unknown>) =>
  `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', model: 'gpt-4o', choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`;

describe('the budget is a cap under 200 parallel requests (issue 15, item 4)', () => {
  it('priced, unpriced and usage-less streams on a nearly spent budget: spend ends within one request of the limit', async () => {
    upstream = await startMockUpstream((req, res) => {
      const body = JSON.parse(req.body.toString()) as { stream?: boolean };
      if (body.stream) {
        // a chat stream without a usage chunk
        startSse(res);
        res.write(chunk({ role: 'assistant', content: '' }));
        for (const t of ANSWER.match(/.{1,40}/g)!) res.write(chunk({ content: t }));
        res.end('data: [DONE]\n\n');
        return;
      }
      replyJson(res, 200, {
        id: 'c',
        object: 'chat.completion',
        model: 'gpt-4o',
        choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 10, completion_tokens: MAX_TOKENS, total_tokens: 10 + MAX_TOKENS },
      });
    });
    home = mkdtempSync(join(tmpdir(), 'svc-cap-'));
    const initial = LIMIT - 3.5 * MAX_COST;
    writeFileSync(
      join(home, 'budget.json'),
      JSON.stringify({
        schema_version: 1,
        periods: { daily: { windowStart: periodStart('daily', T), spend: initial } },
      }),
    );
    const clock = testClock(T);
    svc = await startGuardedSvc({
      home,
      now: clock.now,
      flags: { 'compat-api-url': `${upstream.url}/v1`, budget: LIMIT, cache: false, 'rate-limit': false },
    });
    const kinds = ['priced', 'unpriced', 'stream'] as const;
    const results = await Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        const kind = kinds[i % 3]!;
        const res = await fetch(`${svc!.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: 'Bearer sk-1' },
          body: JSON.stringify({
            model: kind === 'unpriced' ? 'my-local-model' : 'gpt-4o',
            max_tokens: MAX_TOKENS,
            ...(kind === 'stream' ? { stream: true } : {}),
            messages: [{ role: 'user', content: `question ${i}` }],
          }),
        });
        await res.text();
        return { kind, status: res.status };
      }),
    );
    const admitted = results.filter((r) => r.status === 200);
    expect(results.filter((r) => r.status !== 200).every((r) => r.status === 402)).toBe(true);
    expect(results.filter((r) => r.kind === 'unpriced').every((r) => r.status === 402)).toBe(true);
    expect(admitted.length).toBeGreaterThanOrEqual(1);
    expect(upstream.requests).toHaveLength(admitted.length);
    await until(() => svc!.events.length === 200, 10_000);
    await until(() => svc!.server.ctx.guards!.budget.peekStatus().daily.reserved === 0, 5_000);
    const { spend } = svc.server.ctx.guards!.budget.peekStatus().daily;
    // every admitted request is charged (streams by their output) ...
    expect(spend).toBeGreaterThan(initial + admitted.length * 0.001);
    // ... and the cap holds to within one request's cost
    expect(spend).toBeLessThanOrEqual(LIMIT + MAX_COST);
  });
});
