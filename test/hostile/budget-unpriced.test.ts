import { afterEach, describe, expect, it } from 'vitest';
import { startGuardedSvc } from '../guards/helpers.js';
import { type MockUpstream, replyJson, startMockUpstream, type TestSvc } from '../server/helpers.js';
import { CHAT_REPLY } from '../server/sse-mocks.js';

let svc: TestSvc | undefined;
let upstream: MockUpstream | undefined;
afterEach(async () => {
  await svc?.close();
  await upstream?.close();
  svc = upstream = undefined;
});

async function setup(flags: Record<string, unknown>): Promise<void> {
  upstream = await startMockUpstream((_req, res) =>
    replyJson(res, 200, {
      ...CHAT_REPLY,
      usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
    }),
  );
  svc = await startGuardedSvc({ flags: { 'compat-api-url': `${upstream.url}/v1`, ...flags } });
}

const ask = (model: unknown) =>
  fetch(`${svc!.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-1' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });

describe('unpriced models under a budget (issue 15, item 4)', () => {
  it('refuses a model without a price with 402 SVC_MODEL_UNPRICED naming it; the upstream is not called', async () => {
    await setup({ budget: 20 });
    const res = await ask('my-local-model');
    expect(res.status).toBe(402);
    expect(res.headers.get('x-svc-error')).toBe('SVC_MODEL_UNPRICED');
    const body = (await res.json()) as { error: { message: string; code: string } };
    expect(body.error.code).toBe('SVC_MODEL_UNPRICED');
    expect(body.error.message).toContain('"my-local-model"');
    expect(body.error.message).toContain('--pricing-path');
    expect(upstream!.requests).toHaveLength(0);
  });

  it('refuses a request naming no model under a budget', async () => {
    await setup({ budget: 20 });
    const res = await ask(undefined);
    expect(res.status).toBe(402);
    expect(res.headers.get('x-svc-error')).toBe('SVC_MODEL_UNPRICED');
  });

  it('admits priced models under the budget, and unpriced ones without a budget', async () => {
    await setup({ budget: 20 });
    expect((await ask('gpt-4o')).status).toBe(200);
    await svc!.close();
    await upstream!.close();
    await setup({});
    expect((await ask('my-local-model')).status).toBe(200);
  });
});
