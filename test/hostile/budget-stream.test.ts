import { afterEach, describe, expect, it } from 'vitest';
import { tokenizerFor } from '../../src/engine/tokens.js';
import { createStreamOutput } from '../../src/guards/stream-output.js';
import { startGuardedSvc } from '../guards/helpers.js';
import { type MockUpstream, startMockUpstream, type TestSvc, until } from '../server/helpers.js';
import { startSse } from '../server/sse-mocks.js';

let svc: TestSvc | undefined;
let upstream: MockUpstream | undefined;
afterEach(async () => {
  await svc?.close();
  await upstream?.close();
  svc = upstream = undefined;
});

const ANSWER = 'The build fails because the config file is missing a comma on line 12. '.repeat(40);
const chunk = (delta: Record<string, unknown>) =>
  `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', model: 'gpt-4o', choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`;
/** A chat stream without a usage chunk (the client did not ask for stream_options.include_usage). */
const STREAM = [
  chunk({ role: 'assistant', content: '' }),
  ...ANSWER.match(/.{1,50}/g)!.map((t) => chunk({ content: t })),
  'data: [DONE]\n\n',
];

describe('streamed output is charged to the budget (issue 15, item 4)', () => {
  it('reads the output text of chat and messages deltas', () => {
    const out = createStreamOutput();
    const sse = `${chunk({ content: 'Hel' })}${chunk({ tool_calls: [{ function: { name: 'ls', arguments: '{}' } }] })}data: {"type":"content_block_delta","delta":{"type":"text_delta","text":"lo"}}\n\ndata: [DONE]\n\n`;
    for (let i = 0; i < sse.length; i += 7) out.push(Buffer.from(sse.slice(i, i + 7)));
    expect(out.text()).toBe('Hells{}lo');
  });

  it('a chat stream without usage is charged its input and its output, not its input alone', async () => {
    upstream = await startMockUpstream((_req, res) => {
      startSse(res);
      for (const e of STREAM) res.write(e);
      res.end();
    });
    svc = await startGuardedSvc({ flags: { 'compat-api-url': `${upstream.url}/v1`, budget: 20 } });
    const res = await fetch(`${svc.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-1' },
      body: JSON.stringify({
        model: 'gpt-4o',
        stream: true,
        max_tokens: 2000,
        messages: [{ role: 'user', content: 'why?' }],
      }),
    });
    expect(res.status).toBe(200);
    await res.text();
    await until(() => svc!.events.length === 1);
    const event = svc.events[0]!;
    const outputTokens = tokenizerFor('gpt-4o').countText(ANSWER);
    expect(event.streamedOutputTokens).toBe(outputTokens);
    // gpt-4o: $2.50 per million input tokens, $10 per million output tokens (data/pricing.json)
    const expected = (event.tokensAfter * 2.5 + outputTokens * 10) / 1e6;
    expect(event.costUsd).toBeCloseTo(expected, 10);
    await new Promise((r) => setTimeout(r, 20));
    const stats = (await (await fetch(`${svc.url}/stats`)).json()) as {
      budget: { daily: { spend: number } };
    };
    expect(stats.budget.daily.spend).toBeCloseTo(expected, 6);
  });
});
